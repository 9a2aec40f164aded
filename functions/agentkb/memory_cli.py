"""`agentkb memory repair|reindex --workspace W`: operator commands of the OpenSearch memory index.

Run with the deployment's settings (AGENTKB_BACKEND=aws, AGENTKB_OPENSEARCH_ENDPOINT, AGENTKB_MEMORY_TABLE, ...)
and credentials the collection's data-access policy lets write (the ingest role's permissions).
- `repair` re-projects the memories whose index write failed (the `P#~` markers) from DynamoDB into the index.
- `reindex` re-projects every memory of the workspace (backfill after enabling the index, or a lost index).
Both print one JSON line; recall is correct meanwhile (it serves unindexed memories from DynamoDB).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentkb.composition import Ports


def register(subparsers: Any) -> None:
    """Add the `memory` command group to the agentkb CLI's subparsers."""
    memory = subparsers.add_parser("memory", help="agent memory operations (AWS memory index)")
    commands = memory.add_subparsers(dest="memory_command", required=True)
    for name, text in (("repair", "re-index the memories whose index write failed"),
                       ("reindex", "re-index every memory of the workspace from DynamoDB")):
        command = commands.add_parser(name, help=text)
        command.add_argument("--workspace", required=True, action="append", help="workspace id (repeatable)")
        command.set_defaults(func=run)


def run(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.adapters.aws.indexed_memory import IndexedMemoryStore

    store = ports.memories
    if not isinstance(store, IndexedMemoryStore):
        print("error: the memory index needs AGENTKB_BACKEND=aws and AGENTKB_OPENSEARCH_ENDPOINT", file=sys.stderr)
        return 2
    status = 0
    for workspace_id in dict.fromkeys(args.workspace):
        done = store.reindex(workspace_id) if args.memory_command == "reindex" else store.repair(workspace_id)
        left = len(store.truth.unindexed(workspace_id))
        status = status or (1 if left else 0)
        print(json.dumps({"workspace_id": workspace_id, "command": args.memory_command, "indexed": done,
                          "unindexed": left}))
    return status
