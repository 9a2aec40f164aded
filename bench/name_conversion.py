"""What converting a DynamoDB memory table's old-layout personal name claims costs (`agentkb memory repair`):
DynamoDB calls by operation (moto counts them; latency on AWS is not measured here), and the write path's calls
before and after the conversion.

    python bench/name_conversion.py [--claims 100] [--workspaces 5]

Builds a table of `claims` personal memories spread over `workspaces`, rewrites their claims as a table written
before per-owner names holds them (`N#<name>`), adds as many shared memories, converts, and prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "functions"):
    sys.path.insert(0, str(extra))


def record(ws: str, name: str, visibility: str, owner: str) -> Any:
    from agentkb.models.memory.api import MemoryRecord

    return MemoryRecord(workspace_id=ws, project_id=None, visibility=visibility, owner_id=owner, channel_id=None,
                        type="note", name=name, description=name, body=f"body of {name}", confirmed=True, stale=False,
                        valid_until=None, sensitivity=0, source=None, request_hash=f"h-{name}",
                        created_at="2026-11-30T00:00:00Z", updated_at=time.time(), embedding=[0.6, 0.8, 0.0, 0.0],
                        entity_ids=())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--claims", type=int, default=100)
    parser.add_argument("--workspaces", type=int, default=5)
    args = parser.parse_args()

    from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
    from agentkb.adapters.aws.dynamodb.tables import key, n
    from agentkb.models.memory.detail import name_key
    from testkit.moto_aws import memory_table

    with memory_table() as client:
        calls: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.update([model.name]))
        store = DynamoDbMemoryStore(lambda: client, "memory")
        for i in range(args.claims):
            ws, owner, name = f"ws{i % args.workspaces}", f"user{i % 7}", f"note-{i}"
            stored = store.insert(record(ws, name, "personal", owner))
            client.delete_item(TableName="memory", Key=key(f"MW#{ws}", name_key("personal", owner, name)))
            client.put_item(TableName="memory", Item={**key(f"MW#{ws}", "N#" + name),
                                                      "memory_id": n(stored.memory_id), "revision": n(1)})
            store.insert(record(ws, f"shared-{i}", "workspace", owner))

        def write_calls() -> int:
            """The calls of one shared revision in a process that wrote before (its layout read is behind it)."""
            fresh = DynamoDbMemoryStore(lambda: client, "memory")
            for _ in range(2):
                fresh.insert(record("ws0", "revised", "workspace", "bench"))
            calls.clear()
            fresh.insert(record("ws0", "revised", "workspace", "bench"))
            return sum(calls.values())

        before = write_calls()
        calls.clear()
        start = time.perf_counter()
        report = DynamoDbMemoryStore(lambda: client, "memory").convert_names()
        seconds = time.perf_counter() - start
        conversion = dict(sorted(calls.items()))
        after = write_calls()
    print(json.dumps({"claims": args.claims, "shared": args.claims, "moved": report.moved,
                      "converted": report.converted, "conversion_calls": conversion,
                      "conversion_s_moto": round(seconds, 2), "shared_revision_calls_before": before,
                      "shared_revision_calls_after": after}))


if __name__ == "__main__":
    main()
