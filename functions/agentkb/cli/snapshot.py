"""`agentkb snapshot verify FILE`: recompute a stored snapshot's hash from its canonical JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the `snapshot` command group to the agentkb CLI's subparsers."""
    snapshot = subparsers.add_parser("snapshot", help="context snapshot commands")
    commands = snapshot.add_subparsers(dest="snapshot_command", required=True)
    verify = commands.add_parser("verify", help="check that a snapshot's hash matches its content")
    verify.add_argument("file", type=Path, help="a snapshot as returned by POST or GET /v1/snapshots ('-': stdin)")
    verify.set_defaults(func=run_verify)


def _read(path: Path) -> str:
    return sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")


def run_verify(args: argparse.Namespace, ports: object = None) -> int:
    """Exit 0 and print `ok` when the hash matches; 1 on a mismatch; 2 when the file is not a snapshot."""
    from agentkb.services.snapshot.service import snapshot_hash  # here: every other command would pay for its imports

    try:
        snapshot = json.loads(_read(args.file))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"error: cannot read {args.file}: {exc.__class__.__name__}", file=sys.stderr)
        return 2
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("hash"), str):
        print("error: not a snapshot (a JSON object with a string `hash`)", file=sys.stderr)
        return 2
    try:
        actual = snapshot_hash(snapshot)
    except ValueError as exc:
        print(f"error: the snapshot has no canonical form: {exc}", file=sys.stderr)
        return 2
    if actual != snapshot["hash"]:
        print(f"error: hash mismatch: the file says {snapshot['hash']}, its content hashes to {actual}",
              file=sys.stderr)
        return 1
    print("ok")
    return 0

