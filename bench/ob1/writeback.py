"""What one OB1 write-back costs the memory store, by size: DynamoDB round trips per operation (moto counts them; a
round trip's latency on AWS is not measured here) and the embedded SQLite batch's wall time.

    python -m bench.ob1.writeback [--sizes 5,24,60,200]

Sizes up to 24 memories are one TransactWriteItems; larger ones are staged
(adapters/aws/dynamodb/memory/staging.py). Every memory links 2 entities. Embeddings are 384-d, as the local
model's; their computation is not part of this.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any


def records(size: int, tag: str) -> list[Any]:
    from agentkb.models.memory.api import MemoryRecord

    vector = [1 / math.sqrt(384)] * 384
    return [MemoryRecord(workspace_id="bench", project_id=None, visibility="workspace", owner_id="bench",
                         channel_id=None, type="lesson", name=f"{tag}/{i:03d}", description=f"finding {i}",
                         body=f"finding {i} of the bench write-back", confirmed=False, stale=False, valid_until=None,
                         sensitivity=0, source=None, request_hash=f"h{i}", created_at="2026-11-30T00:00:00Z",
                         updated_at=time.time(), embedding=vector, entity_ids=("e-a", f"e-{i % 5}"))
            for i in range(size)]


class Counting:
    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, Counter[str]()

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.client, name)

        def call(**kwargs: Any) -> Any:
            self.calls[name] += 1
            return real(**kwargs)
        return call


def dynamodb_calls(size: int) -> dict[str, int]:
    from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
    from testkit.moto_aws import memory_table, one_backup_per_table
    from testkit.patches import Patches

    with Patches() as patch, memory_table() as client:
        one_backup_per_table(patch)
        counting = Counting(client)
        DynamoDbMemoryStore(lambda: counting, "memory", track_index=True).insert_batch(records(size, "ddb"))
        return dict(sorted(counting.calls.items()))


def sqlite_ms(size: int, repeats: int = 5) -> float:
    from agentkb.adapters.embedded.sqlite.db import Database
    from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore

    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteMemoryStore(Database(Path(tmp) / "m.sqlite3"))
        times = []
        for r in range(repeats):
            start = time.perf_counter()
            store.insert_batch(records(size, f"sql{r}"))
            times.append((time.perf_counter() - start) * 1000)
        return round(sorted(times)[len(times) // 2], 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="5,24,60,200")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    for size in sizes:
        calls = dynamodb_calls(size)
        print(json.dumps({"memories": size, "dynamodb_calls": calls, "dynamodb_round_trips": sum(calls.values()),
                          "sqlite_batch_ms_median": sqlite_ms(size)}))


if __name__ == "__main__":
    main()
