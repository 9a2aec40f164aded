"""The DynamoDB memory store's multi-memory writes: id allocation, the bulk load and the all-or-nothing batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import revision_items
from agentkb.adapters.aws.dynamodb.memory.staging import CHUNK
from agentkb.adapters.aws.dynamodb.memory.sweep import DynamoDbMemorySweep
from agentkb.adapters.aws.dynamodb.tables import batch_write, guarded, key, n
from agentkb.errors import Conflict
from agentkb.models.memory.api import MemoryRecord, StoredMemory

STORE = "memory"
MAX_BATCH = 1000  # memories per insert_batch (OB1 write-backs are capped lower, services/ob1_writeback.py)


class DynamoDbMemoryBatches(DynamoDbMemorySweep):
    """Writes of many memories at once on the memory table."""

    track_index = False

    def _allocate(self, count: int) -> int:
        """The first of `count` fresh memory ids."""
        out = guarded(STORE, lambda: self.client.update_item(
            TableName=self.table, Key=key("MSEQ", "#SEQ"), UpdateExpression="ADD #next :c",
            ExpressionAttributeNames={"#next": "next"}, ExpressionAttributeValues={":c": n(count)},
            ReturnValues="UPDATED_NEW"))
        return int(out["Attributes"]["next"]["N"]) - count + 1

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        """New names only, all or nothing: up to CHUNK memories in one transaction, more as a staged write-back
        (dynamodb_memory_staging.py). A name that is taken fails the batch with Conflict, unless an abandoned
        stage holds it: that stage is discarded and the batch tried once more; a stage that may still commit
        holding it answers WriteInProgress (409 + Retry-After; dynamodb_memory_sweep.py)."""
        if len(records) > MAX_BATCH:
            raise ValueError(f"at most {MAX_BATCH} memories per batch")
        if len({r.workspace_id for r in records}) > 1:
            raise ValueError("a batch writes one workspace")
        if not records:
            return []
        try:
            return self._insert_batch(records)
        except Conflict:
            if not self._reclaim(records[0].workspace_id, [r.name_key for r in records]):
                raise
        return self._insert_batch(records)

    def _insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        first = self._allocate(len(records))
        if len(records) <= CHUNK:
            return self._write(records, first, None)
        written = self._write_staged(records, first)
        self._sweep_quietly(records[0].workspace_id)  # stages other writers of this workspace abandoned
        return written

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Bulk load of new names: BatchWriteItem, not atomic on DynamoDB (the embedded engine is)."""
        if not records:
            return []
        first = self._allocate(len(records))
        requests: list[dict[str, Any]] = []
        metas: dict[str, MemoryRecord] = {}
        for offset, r in enumerate(records):
            item, vector, links = revision_items(r, first + offset, 1, None)
            pointer = {**key(f"MW#{r.workspace_id}", r.name_key), "memory_id": n(first + offset),
                       "revision": n(1)}
            marker = [self._unindexed(r.workspace_id, first + offset)] if self.track_index else []
            requests += [{"PutRequest": {"Item": i}} for i in (*links, *marker, item, vector, pointer)]
            metas.setdefault(r.workspace_id, r)
        batch_write(self.client, STORE, self.table, requests)
        for r in metas.values():
            guarded(STORE, lambda r=r: self.client.update_item(**self._meta(r)))  # type: ignore[misc]
        return list(range(first, first + len(records)))
