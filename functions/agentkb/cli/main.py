"""The `agentkb` command line: serve, keys, kb, ingest, docs, search, demo, graph, snapshot, memory, mcp, auth.

Every command is `func(args, ports)`: `main` applies `--data-dir`, then hands each command the configured
engine's bundle (composition.get_ports), so a command acts on the embedded or the AWS engine alike.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentkb.cli import auth as auth_cli
from agentkb.cli import data as data_cli
from agentkb.cli import docs as docs_cli
from agentkb.cli import graph as graph_cli
from agentkb.cli import memory as memory_cli
from agentkb.cli import portability as portability_cli
from agentkb.cli import search as search_cli
from agentkb.cli import snapshot as snapshot_cli
from agentkb.cli.io import CliError, CliParser, one_line, quiet_closed_stdout, validation_message
from agentkb.composition import Ports, get_ports, reset_ports
from agentkb.config import ConfigurationError, Settings, reset_settings
from agentkb.errors import DomainError
from agentkb.mcp import cli as mcp_cli

KB_CREATE_FIELDS = {"workspaceId": "--workspace", "name": "--name", "description": "--description",
                    "tagDefinitions": "--tag"}


def _use_data_dir(args: argparse.Namespace) -> None:
    if getattr(args, "data_dir", None):
        os.environ["AGENTKB_DATA_DIR"] = str(args.data_dir)
    reset_settings()
    reset_ports()


def _cmd_serve(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.server import serve

    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
    serve(args.host, args.port, malloc_arenas=args.malloc_arenas)
    return 0


def _cmd_keys_create(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.services.access.api_keys import create_api_key

    key, record = create_api_key(ports.keys, ports.secrets, args.workspace, args.scope, args.principal)
    if args.json:
        print(json.dumps({"key": key, "keyId": record.key_id, "principal": record.principal,
                          "workspaces": list(record.workspaces), "scopes": list(record.scopes)}))
    else:
        print(key)
        print(f"keyId={record.key_id} principal={record.principal} workspaces={','.join(record.workspaces)} "
              f"scopes={','.join(record.scopes)} (shown once; only a hash is stored)", file=sys.stderr)
    return 0


def _cmd_kb_create(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.operator import create_kb

    kb = create_kb(ports, args.workspace, args.name, args.description, args.tag)
    print(json.dumps({"id": kb.id, "workspaceId": kb.workspace_id, "name": kb.name,
                      "tagDefinitions": [{"tagName": t.tag_name, "fieldType": t.field_type, "slot": t.slot}
                                         for t in kb.tag_definitions]}) if args.json else kb.id)
    return 0


def _cmd_ingest(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.operator import ingest_paths

    summary = ingest_paths(ports, args.workspace, args.kb, args.paths, progress=not args.quiet,
                           replace=args.replace, prune=args.prune)
    if args.json:
        print(json.dumps(summary))
    else:
        _print_summary(summary)
    return 0 if not (summary["failed"] or summary["conflicts"]) else 1


def _print_summary(summary: dict[str, Any]) -> None:
    counts = ", ".join(f"{k} {summary[k]}" for k in ("created", "updated", "unchanged", "removed"))
    print(f"{counts}, conflicts {len(summary['conflicts'])}, skipped {len(summary['skipped'])},"
          f" failed {len(summary['failed'])}")
    for d in summary["documents"]:
        if d["outcome"] != "unchanged":
            print(f"{d['outcome']}\t{d['id']}\t{d['name']}")
    for c in summary["conflicts"]:
        why = c.get("reason") or "--replace overwrites it"
        print(f"conflict\t{c['name']}\t{c['path']} (already ingested from {c['existingSourcePath']}; {why})")
    for s in summary["skipped"]:
        print(f"skipped\t{s['path']}\t{s['reason']}")
    for f in summary["failed"]:
        print(f"failed\t{f['path']}\t{f['error']}")
    for w in summary["warnings"]:
        print(f"warning\t{w['path']}\t{w['message']}", file=sys.stderr)


def _cmd_demo(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.local.demo import run_demo

    run_demo(ports, args.host, args.port)
    return 0


def _data_dir_parent() -> CliParser:
    parent = CliParser(add_help=False)
    parent.add_argument("--data-dir", type=Path, help="data directory (default: .agentkb/, or AGENTKB_DATA_DIR)")
    return parent


def _add_server_options(cmd: argparse.ArgumentParser, what: str) -> None:
    cmd.add_argument("--host", default="127.0.0.1", help=f"address {what}")
    cmd.add_argument("--port", type=int, default=8787, help=f"port {what}")


def build_parser() -> argparse.ArgumentParser:
    common = _data_dir_parent()
    parser = CliParser(prog="agentkb", description="The knowledge service for AI agents.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", parents=[common], help="the local API gateway over the Lambda handlers")
    _add_server_options(serve, "to listen on")
    serve.add_argument("--malloc-arenas", type=int, default=2, help="glibc malloc arenas, 0 for glibc's own choice")
    serve.set_defaults(func=_cmd_serve)

    keys = sub.add_parser("keys", help="API keys").add_subparsers(dest="keys_command", required=True)
    create = keys.add_parser("create", parents=[common], help="create an API key (printed once)")
    create.add_argument("--workspace", action="append", required=True, help="workspace the key reaches (repeatable)")
    create.add_argument("--scope", action="append", required=True, choices=["api:read", "api:write", "api:admin"],
                        help="what the key may do (repeatable)")
    create.add_argument("--principal", help="who the key acts as (default: a generated id)")
    data_cli.add_output_options(create)
    create.set_defaults(func=_cmd_keys_create)

    kb = sub.add_parser("kb", help="knowledge bases").add_subparsers(dest="kb_command", required=True)
    kb_create = kb.add_parser("create", parents=[common], help="create a knowledge base")
    kb_create.add_argument("--workspace", required=True, help="workspace id (created with its first KB)")
    kb_create.add_argument("--name", required=True, help="knowledge base name, unique in the workspace")
    kb_create.add_argument("--description", help="what the knowledge base holds")
    kb_create.add_argument("--tag", action="append", default=[], metavar="NAME:TYPE",
                           help="tag definition, TYPE in text|number|date|boolean (repeatable)")
    data_cli.add_output_options(kb_create)
    kb_create.set_defaults(func=_cmd_kb_create, fields=KB_CREATE_FIELDS)
    data_cli.add_kb_commands(kb, common)
    portability_cli.add_kb_reindex(kb, common)
    data_cli.add_key_commands(keys, common)
    docs_cli.register(sub, common)
    search_cli.register(sub, common)

    ingest = sub.add_parser("ingest", parents=[common],
                            help="ingest files or folders (.md .markdown .txt .html .htm .pdf .docx)")
    ingest.add_argument("--workspace", required=True, help="workspace id")
    ingest.add_argument("--kb", required=True, help="knowledge base id or name")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.add_argument("--replace", action="store_true",
                        help="overwrite documents of the same name ingested from another source path")
    ingest.add_argument("--prune", action="store_true",
                        help="delete the KB's documents under the folders given whose files are gone")
    ingest.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files and folders to ingest")
    ingest.set_defaults(func=_cmd_ingest)

    demo = sub.add_parser("demo", parents=[common], help="create the demo workspace, KB, key and corpus")
    _add_server_options(demo, "the printed curls call")
    demo.set_defaults(func=_cmd_demo)

    for group in (graph_cli, snapshot_cli, memory_cli, portability_cli, mcp_cli, auth_cli):
        group.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure is one line on stderr and a non-zero status (cli_io.py says which)."""
    args = build_parser().parse_args(argv)
    try:
        _use_data_dir(args)
        status = int(args.func(args, get_ports()) or 0)
        sys.stdout.flush()  # here, not at exit: a reader that went away is seen where it is handled
        return status
    except BrokenPipeError:
        return quiet_closed_stdout()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - only the kinds _error_line knows; anything else is a bug to see
        line = _error_line(exc, getattr(args, "fields", {}))
        if line is None:
            raise
        print(f"error: {line}", file=sys.stderr)
        return 2


def _error_line(exc: Exception, fields: dict[str, str]) -> str | None:
    """The one line a failure prints, or None for a failure that is a bug (it keeps its traceback)."""
    if isinstance(exc, DomainError):
        detail = ""
        if isinstance(exc.details, list) and exc.details and isinstance(exc.details[0], dict):
            detail = f" ({exc.details[0].get('path')}: {exc.details[0].get('message')})"
        return one_line(exc.message + detail)
    if isinstance(exc, ValidationError):
        return validation_message(exc, fields)
    if isinstance(exc, ConfigurationError) and isinstance(exc.__cause__, ValidationError):
        variables = {name: f"AGENTKB_{name.upper()}" for name in Settings.model_fields}
        return f"invalid agentkb configuration: {validation_message(exc.__cause__, variables)}"
    if isinstance(exc, CliError | OSError | ValueError | ConfigurationError):  # e.g. AWS settings missing a table
        return one_line(str(exc))
    return None


if __name__ == "__main__":
    sys.exit(main())
