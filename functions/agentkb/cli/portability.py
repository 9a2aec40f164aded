"""`agentkb export`, `agentkb import` and `agentkb forget` (issue 25, docs/portability.md), on the configured
engine."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentkb.composition import Ports


def register(subparsers: Any) -> None:
    """Add `export`, `import` and `forget` to the agentkb CLI's subparsers."""
    export = subparsers.add_parser("export", help="write everything a workspace holds to one archive")
    export.add_argument("--workspace", required=True, help="workspace id")
    export.add_argument("--kb", action="append", default=[], metavar="NAME",
                        help="only this knowledge base (id or name; repeatable; default: all)")
    export.add_argument("--out", required=True, help="archive file (.gz: compressed), or - for stdout")
    export.add_argument("--data-dir", type=Path, help="data directory (default .agentkb or AGENTKB_DATA_DIR)")
    export.set_defaults(func=run_export)
    imp = subparsers.add_parser("import", help="import an archive into the configured engine (idempotent)")
    imp.add_argument("file", type=Path, help="an archive written by agentkb export")
    imp.add_argument("--workspace", help="import into this workspace (default: the archive's)")
    imp.add_argument("--quiet", action="store_true", help="no progress bar")
    imp.add_argument("--json", action="store_true", help="print the report as one JSON object")
    imp.add_argument("--data-dir", type=Path, help="data directory (default .agentkb or AGENTKB_DATA_DIR)")
    imp.set_defaults(func=run_import)
    forget = subparsers.add_parser("forget", help="remove a person from a workspace: personal memories, traces, "
                                                  "usage events and keys")
    forget.add_argument("--workspace", required=True, help="workspace id")
    forget.add_argument("--principal", required=True, help="the principal (person) to forget")
    forget.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    forget.add_argument("--data-dir", type=Path, help="data directory (default .agentkb or AGENTKB_DATA_DIR)")
    forget.set_defaults(func=run_forget)
    back = subparsers.add_parser("backup", help="a consistent copy of the embedded data dir, also while serving")
    back.add_argument("--out", type=Path, required=True, help="backup file (a gzip tar)")
    back.add_argument("--data-dir", type=Path, help="data directory (default .agentkb or AGENTKB_DATA_DIR)")
    back.set_defaults(func=run_backup)
    restore = subparsers.add_parser("restore", help="restore a backup into the (empty) embedded data dir")
    restore.add_argument("file", type=Path, help="a file written by agentkb backup")
    restore.add_argument("--force", action="store_true", help="replace a data dir that holds data")
    restore.add_argument("--data-dir", type=Path, help="data directory (default .agentkb or AGENTKB_DATA_DIR)")
    restore.set_defaults(func=run_restore)


def add_kb_reindex(kb_commands: Any, common: argparse.ArgumentParser) -> None:
    """`agentkb kb reindex`: in the `kb` group."""
    cmd = kb_commands.add_parser("reindex", parents=[common], help="re-embed a knowledge base from its documents "
                                 "(rebuilds a lost index; with another model, switches the KB to it in place)")
    cmd.add_argument("--workspace", required=True, help="workspace id")
    cmd.add_argument("--kb", required=True, help="knowledge base id or name")
    cmd.add_argument("--embedding-model", help="MODEL or MODEL@DIMENSION to move the KB to (default: the configured "
                                               "embedder's); searches use the old vectors until the switch")
    cmd.add_argument("--quiet", action="store_true", help="no progress bar")
    cmd.set_defaults(func=run_reindex)


def run_reindex(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.services.portability.reindex import reindex_kb

    bar: Any = None
    if not args.quiet:
        from tqdm import tqdm

        bar = tqdm(desc=f"reindex {args.kb}", unit="document", file=sys.stderr)
    try:
        counts = reindex_kb(ports, args.workspace, args.kb, args.embedding_model,
                            None if bar is None else bar.update)
    finally:
        if bar is not None:
            bar.close()
    parts = [f"documents {counts['documents']}", f"chunks {counts['chunks']}"]
    if counts.get("switched"):
        parts += [f"already staged {counts['resumed']}", f"caught up {counts['caughtUp']}"]
        moved = ports.catalog.get_knowledge_base(args.workspace, args.kb) or \
            ports.catalog.find_knowledge_base_by_name(args.workspace, args.kb)
        if moved is not None:
            parts.append(f"now {moved.profile.model} ({moved.profile.dimension}-d)")
    print(f"reindexed {args.kb}: {', '.join(parts)}")
    return 0


def run_export(args: argparse.Namespace, ports: Ports) -> int:
    """Stream the archive to --out; print the manifest's counts on stderr (stdout may be the archive)."""
    from agentkb.services.portability.archive_file import open_output
    from agentkb.services.portability.export import ExportRequest, export_workspace

    out = open_output(args.out)
    try:
        manifest = export_workspace(ports, ExportRequest(args.workspace, tuple(args.kb)), out,
                                    ports.builder.engine.name)
    finally:
        if out is not sys.stdout:
            out.close()
    counts = ", ".join(f"{name} {m['count']}" for name, m in manifest.items())
    print(f"exported workspace {args.workspace}: {counts}", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace, ports: Ports) -> int:
    """Verify, import, verify; exit 0 with the report (also when nothing was new), 2 on a refused archive."""
    from agentkb.services.portability.importer import import_archive

    bar = _Progress(not args.quiet)
    try:
        report = import_archive(ports, args.file, args.workspace, bar)
    finally:
        bar.close()
    result = report.as_dict()
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"imported into workspace {report.workspace_id} (from {report.source_workspace_id}): "
          + ("nothing new, the target held the whole archive already" if not report.changed else "done"))
    for name, s in result["sections"].items():
        check = "verified" if s["verified"] else "not compared" if name == "keys" else "differs"
        print(f"{name}\tarchive {s['archive']}\twritten {s['written']}\tpresent {s['present']}\t{check}"
              f"\t{s['sha256']}")
    if report.ids_remapped:
        print(f"ids remapped: this engine holds workspace {report.source_workspace_id} under the archive's ids, so"
              f" knowledge bases, documents, chunks, memories and traces have new ids in {report.workspace_id}")
    if report.tally.reembedded or report.tally.reembedded_memories:
        print(f"re-embedded {report.tally.reembedded} chunks and {report.tally.reembedded_memories} memories with"
              f" {ports.embedder.model_id}")
    if result["sections"]["keys"]["archive"]:
        print("keys: metadata only; issue new keys on the target (agentkb keys create)", file=sys.stderr)
    return 0


def run_forget(args: argparse.Namespace, ports: Ports) -> int:
    """Forget the principal on the configured engine; print what went."""
    from agentkb.services.access.forget import forget_principal

    removed = forget_principal(ports, args.workspace, args.principal)
    if args.json:
        print(json.dumps({"workspace_id": args.workspace, "principal_id": args.principal, "removed": removed}))
    else:
        print(f"forgot {args.principal} in {args.workspace}: " + ", ".join(f"{k} {v}" for k, v in removed.items()))
    return 0


def _embedded_only(ports: Ports, command: str) -> None:
    from agentkb.cli.io import CliError

    if ports.builder.engine.name != "embedded":
        raise CliError(f"agentkb {command} copies the embedded data dir; on AWS the backup is DynamoDB point-in-time "
                       "recovery and S3 versioning (docs/operations-aws.md)")


def run_backup(args: argparse.Namespace, ports: Ports) -> int:
    """Write the backup; print what it holds."""
    from agentkb.adapters.embedded.backup import backup

    _embedded_only(ports, "backup")
    manifest = backup(ports.settings.data_dir, args.out)
    counts = ", ".join(f"{k} {v}" for k, v in manifest["tables"].items())
    print(f"backed up {ports.settings.data_dir} to {args.out}: {counts}")
    return 0


def run_restore(args: argparse.Namespace, ports: Ports) -> int:
    """Restore into the data dir, rebuild its BM25 indexes; print what it holds."""
    from agentkb.adapters.embedded.backup import rebuild_indexes, restore

    _embedded_only(ports, "restore")
    manifest = restore(args.file, ports.settings.data_dir, force=args.force)
    rebuild_indexes(ports.settings.data_dir)
    counts = ", ".join(f"{k} {v}" for k, v in manifest["tables"].items())
    print(f"restored {args.file} into {ports.settings.data_dir}: {counts}")
    return 0


class _Progress:
    """A tqdm bar of re-embedded chunks on stderr, opened on the first batch."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="re-embed", unit="chunk", smoothing=0.1, file=sys.stderr)
        self.bar.update(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
