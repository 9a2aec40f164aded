"""The DynamoDB memory store's multi-memory writes: the bulk load and the all-or-nothing batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import meta_update, revision_items
from agentkb.adapters.aws.dynamodb.memory.markers import DynamoDbMemoryMarkers
from agentkb.adapters.aws.dynamodb.memory.revisions import allocate_ids
from agentkb.adapters.aws.dynamodb.memory.staging import CHUNK, DynamoDbMemoryStaging
from agentkb.adapters.aws.dynamodb.memory.sweep import DynamoDbMemorySweep
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, key, n
from agentkb.errors import Conflict
from agentkb.models.memory.api import MemoryRecord, StoredMemory

MAX_BATCH = 1000  # memories per insert_batch (OB1 write-backs are capped lower, services/ob1/writeback.py)


class DynamoDbMemoryBatches:
    """Writes of many memories at once on the memory table."""

    def __init__(self, db: DynamoDbTable, markers: DynamoDbMemoryMarkers, staging: DynamoDbMemoryStaging,
                 sweep: DynamoDbMemorySweep) -> None:
        self.db = db
        self.markers = markers
        self.staging = staging
        self.sweep = sweep

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        """New names only, all or nothing: up to CHUNK memories in one transaction, more as a staged write-back
        (staging.py). A name that is taken fails the batch with Conflict, unless an abandoned stage holds it: that
        stage is discarded and the batch tried once more; a stage that may still commit holding it answers
        WriteInProgress (409 + Retry-After; sweep.py)."""
        if len(records) > MAX_BATCH:
            raise ValueError(f"at most {MAX_BATCH} memories per batch")
        if len({r.workspace_id for r in records}) > 1:
            raise ValueError("a batch writes one workspace")
        if not records:
            return []
        try:
            return self._insert_batch(records)
        except Conflict:
            if not self.sweep.reclaim(records[0].workspace_id, [r.name_key for r in records]):
                raise
        return self._insert_batch(records)

    def _insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        first = allocate_ids(self.db, len(records))
        if len(records) <= CHUNK:
            return self.staging.write(records, first, None)
        written = self.staging.write_staged(records, first)
        self.sweep.sweep_quietly(records[0].workspace_id)  # stages other writers of this workspace abandoned
        return written

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Bulk load of new names: BatchWriteItem, not atomic on DynamoDB (the embedded engine is)."""
        if not records:
            return []
        first = allocate_ids(self.db, len(records))
        requests: list[dict[str, Any]] = []
        metas: dict[str, MemoryRecord] = {}
        for offset, r in enumerate(records):
            item, vector, links = revision_items(r, first + offset, 1, None)
            pointer = {**key(f"MW#{r.workspace_id}", r.name_key), "memory_id": n(first + offset),
                       "revision": n(1)}
            marker = self.markers.unindexed_items(r.workspace_id, first + offset)
            requests += [{"PutRequest": {"Item": i}} for i in (*links, *marker, item, vector, pointer)]
            metas.setdefault(r.workspace_id, r)
        self.db.batch_write(requests)
        for r in metas.values():
            self.db.update(**meta_update(r))
        return list(range(first, first + len(records)))
