"""The DynamoDB memory store's multi-memory writes: id allocation, the bulk load and the all-or-nothing batch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.aws_errors import is_conditional_failure, store_failure
from agentkb.adapters.aws.dynamodb_memory_items import revision_items, summary
from agentkb.adapters.aws.dynamodb_memory_markers import DynamoDbMemoryMarkers
from agentkb.adapters.aws.dynamodb_tables import batch_write, guarded, key, n
from agentkb.errors import Conflict
from agentkb.models.memory import MemoryRecord, StoredMemory

STORE = "memory"
MAX_BATCH = 24  # memories per insert_batch: 4 items each (+1) in one TransactWriteItems of at most 100


class DynamoDbMemoryBatches(DynamoDbMemoryMarkers):
    """Writes of many memories at once on the memory table."""

    track_index = False

    def _allocate(self, count: int) -> int:
        """The first of `count` fresh memory ids."""
        out = guarded(STORE, lambda: self.client.update_item(
            TableName=self.table, Key=key("MSEQ", "#SEQ"), UpdateExpression="ADD #next :c",
            ExpressionAttributeNames={"#next": "next"}, ExpressionAttributeValues={":c": n(count)},
            ReturnValues="UPDATED_NEW"))
        return int(out["Attributes"]["next"]["N"]) - count + 1

    def _meta(self, r: MemoryRecord) -> dict[str, Any]:
        return {"TableName": self.table, "Key": key(f"MW#{r.workspace_id}", "#META"),
                "UpdateExpression": "SET dim = if_not_exists(dim, :d)",
                "ExpressionAttributeValues": {":d": n(len(r.embedding))}}

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        """New names only, all or nothing (one transaction): a name that is taken fails the batch with Conflict."""
        if len(records) > MAX_BATCH:
            raise ValueError(f"at most {MAX_BATCH} memories per batch")
        if not records:
            return []
        first = self._allocate(len(records))
        actions: list[dict[str, Any]] = []
        out: list[StoredMemory] = []
        for offset, r in enumerate(records):
            item, vector, links = revision_items(r, first + offset, 1, None)
            batch_write(self.client, STORE, self.table, [{"PutRequest": {"Item": link}} for link in links])
            claim = {**key(f"MW#{r.workspace_id}", f"N#{r.name}"), "memory_id": n(first + offset), "revision": n(1)}
            actions += [{"Put": {"TableName": self.table, "Item": claim,
                                 "ConditionExpression": "attribute_not_exists(pk)"}},
                        {"Put": {"TableName": self.table, "Item": item}},
                        {"Put": {"TableName": self.table, "Item": vector}}]
            if self.track_index:
                actions.append({"Put": {"TableName": self.table,
                                        "Item": self._unindexed(r.workspace_id, first + offset)}})
            out.append(summary(item))
        actions += [{"Update": self._meta(r)} for r in {r.workspace_id: r for r in records}.values()]
        try:
            self.client.transact_write_items(TransactItems=actions)
        except Exception as exc:
            if is_conditional_failure(exc):
                raise Conflict("A memory of the same name exists already") from exc
            raise store_failure(exc, store=STORE) from exc
        return out

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Bulk load of new names: BatchWriteItem, not atomic on DynamoDB (the embedded engine is)."""
        if not records:
            return []
        first = self._allocate(len(records))
        requests: list[dict[str, Any]] = []
        metas: dict[str, MemoryRecord] = {}
        for offset, r in enumerate(records):
            item, vector, links = revision_items(r, first + offset, 1, None)
            pointer = {**key(f"MW#{r.workspace_id}", f"N#{r.name}"), "memory_id": n(first + offset),
                       "revision": n(1)}
            marker = [self._unindexed(r.workspace_id, first + offset)] if self.track_index else []
            requests += [{"PutRequest": {"Item": i}} for i in (*links, *marker, item, vector, pointer)]
            metas.setdefault(r.workspace_id, r)
        batch_write(self.client, STORE, self.table, requests)
        for r in metas.values():
            guarded(STORE, lambda r=r: self.client.update_item(**self._meta(r)))  # type: ignore[misc]
        return list(range(first, first + len(records)))
