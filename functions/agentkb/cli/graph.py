"""`agentkb graph import FILE.json --workspace W [--project P]` (the CLI face of `POST /v1/graph`) and
`agentkb graph migrate [--workspace W]`, on the configured engine."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkb.errors import DomainError

if TYPE_CHECKING:
    from agentkb.composition import Ports


def register(subparsers: Any) -> None:
    """Add the `graph` command group to the agentkb CLI's subparsers."""
    graph = subparsers.add_parser("graph", help="knowledge graph commands")
    commands = graph.add_subparsers(dest="graph_command", required=True)
    imp = commands.add_parser("import", help="upsert entities, relations and proofs from a JSON file")
    imp.add_argument("file", type=Path, help="JSON: {entities: [...], relations: [...], proofs: [...]}")
    imp.add_argument("--workspace", required=True, help="workspace id (overrides the file's workspaceId)")
    imp.add_argument("--project", help="default projectId of project-scope entities")
    imp.add_argument("--data-dir", type=Path, help="data directory (default .agentkb or AGENTKB_DATA_DIR)")
    imp.set_defaults(func=run_import)
    mig = commands.add_parser("migrate", help="bring graphs stored before the upstream model onto it (the embedded "
                                              "engine also does this when it opens a database)")
    mig.add_argument("--workspace", action="append", help="only this workspace (repeatable; default: all)")
    mig.add_argument("--data-dir", type=Path, help="data directory (default .agentkb or AGENTKB_DATA_DIR)")
    mig.set_defaults(func=run_migrate)


def run_migrate(args: argparse.Namespace, ports: Ports) -> int:
    """Migrate every workspace (or those named) of the configured engine; print what changed as one JSON line."""
    from agentkb.services.graph.migration import migrate_graph

    try:
        report = migrate_graph(ports.graph, args.workspace)
    except DomainError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    print(json.dumps({"migrated": report}))
    return 0


def run_import(args: argparse.Namespace, ports: Ports) -> int:
    """Validate the whole file, write it atomically into the configured engine's graph, print the counts."""
    from agentkb.services.graph.write import parse_graph_write, upsert_graph

    try:
        payload = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: cannot read {args.file}: {exc.__class__.__name__}", file=sys.stderr)
        return 2
    if not isinstance(payload, dict):
        print("error: the file must hold a JSON object", file=sys.stderr)
        return 2
    payload = {**payload, "workspaceId": args.workspace}
    if args.project:
        payload["projectId"] = args.project
    try:
        result = upsert_graph(ports.graph, parse_graph_write(payload))
    except DomainError as exc:
        issues = (exc.details or {}).get("issues", []) if isinstance(exc.details, dict) else []
        where = f" ({issues[0]['path']}: {issues[0]['message']}, {len(issues)} issue(s))" if issues else ""
        print(f"error: {exc.message}{where}", file=sys.stderr)
        return 2
    print(json.dumps(result.data.model_dump()))
    return 0

