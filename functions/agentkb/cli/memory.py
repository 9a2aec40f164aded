"""`agentkb memory repair|reindex`: operator commands of the memory store and its OpenSearch index.

Run with the deployment's settings (AGENTKB_BACKEND=aws, AGENTKB_MEMORY_TABLE, AGENTKB_OPENSEARCH_ENDPOINT, ...)
and credentials the collection's data-access policy lets write (the ingest role's permissions).
- `repair` (DynamoDB): per `--workspace`, sweeps abandoned staged write-backs (dynamodb_memory_sweep.py) and, with
  the memory index, re-projects the memories whose index write failed (the `P#~` markers); then converts the
  table's old-layout personal name claims (table-wide; resumable, idempotent: dynamodb_memory_layout.py).
  Embedded: names were migrated when the database opened; nothing else to repair in the memory store.
- `reindex` re-projects every memory of the workspace (backfill after enabling the index, or a lost index).
Each prints JSON lines; recall is correct meanwhile (it serves unindexed memories from DynamoDB).
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
    memory = subparsers.add_parser("memory", help="agent memory operations (memory store and AWS memory index)")
    commands = memory.add_subparsers(dest="memory_command", required=True)
    for name, text, required in (
            ("repair", "convert old name claims, sweep abandoned write-backs, re-index failed index writes", False),
            ("reindex", "re-index every memory of the workspace from DynamoDB", True)):
        command = commands.add_parser(name, help=text)
        command.add_argument("--workspace", required=required, action="append", default=[],
                             help="workspace id (repeatable)")
        command.set_defaults(func=run)


def run(args: argparse.Namespace, ports: Ports) -> int:
    from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
    from agentkb.adapters.aws.opensearch.indexed_memory import IndexedMemoryStore

    store = ports.memories
    truth = store.truth if isinstance(store, IndexedMemoryStore) else store
    if args.memory_command == "reindex" and not isinstance(store, IndexedMemoryStore):
        print("error: the memory index needs AGENTKB_BACKEND=aws and AGENTKB_OPENSEARCH_ENDPOINT", file=sys.stderr)
        return 2
    if not isinstance(truth, DynamoDbMemoryStore):
        print(json.dumps({"command": args.memory_command, "engine": "embedded",
                          "names": {"converted": True, "migrated": "on open"}}))
        return 0
    status = 0
    for workspace_id in dict.fromkeys(args.workspace):
        line: dict[str, Any] = {"workspace_id": workspace_id, "command": args.memory_command}
        if args.memory_command == "repair":
            stages = truth.sweep_stages(workspace_id)
            line.update(stages_swept=stages.swept, stages_live=stages.live, stages_published=stages.published)
        if isinstance(store, IndexedMemoryStore):
            done = store.reindex(workspace_id) if args.memory_command == "reindex" else store.repair(workspace_id)
            left = len(store.truth.unindexed(workspace_id))
            status = status or (1 if left else 0)
            line.update(indexed=done, unindexed=left)
        print(json.dumps(line))
    if args.memory_command == "repair":  # after the sweeps: the claims of swept stages are not scanned
        names = truth.convert_names()
        status = status or (0 if names.converted else 1)
        print(json.dumps({"command": "repair", "names": {"converted": names.converted, "moved": names.moved,
                                                         "scanned": names.scanned, "left": names.left}}))
    return status
