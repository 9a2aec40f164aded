"""The DynamoDB memory store's bookkeeping for the OpenSearch memory legs (indexed_memory.py): `P#` markers.

`P#~<id>` marks a memory the index has not accepted yet (written in the memory's own transaction when an index is
attached); `P#<ms>#<id>` a memory indexed at <ms>, pending until the index shows it, then removed by TTL.

Also the read side of staged write-backs (staging.py): an item carrying `wb` belongs to a write-back
that is visible only once its `WB#<wb>` record says `committed`; every item read here goes through `published`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import mid
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n, s

MARKER_TTL_S = 86_400  # an indexed marker outlives the refresh lag by far; DynamoDB TTL removes it (`ttl`)


def unindexed_marker(workspace_id: str, memory_id: int) -> dict[str, Any]:
    """The `P#~` item of a memory the index has not accepted yet."""
    return {**key(f"MW#{workspace_id}", "P#~" + mid(memory_id)), "memory_id": n(memory_id)}


class DynamoDbMemoryMarkers:
    """Consistent item reads and the P# markers of the memory table. `track_index`: an index is attached, so every
    new or changed memory carries its unindexed marker."""

    def __init__(self, db: DynamoDbTable, *, track_index: bool = False) -> None:
        self.db = db
        self.track_index = track_index

    def unindexed_items(self, workspace_id: str, memory_id: int) -> list[dict[str, Any]]:
        """The marker a write of this memory adds to its transaction (none without an index)."""
        return [unindexed_marker(workspace_id, memory_id)] if self.track_index else []

    def published(self, workspace_id: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The items readers may see: those of no staged write-back, or of a committed one (one BatchGetItem of the
        distinct write-back records, only when a staged item is among them)."""
        staged = {get_s(i, "wb") or "" for i in items if "wb" in i}
        if not staged:
            return items
        committed = self.committed_stages(workspace_id, staged)
        return [i for i in items if "wb" not in i or get_s(i, "wb") in committed]

    def committed_stages(self, workspace_id: str, stages: set[str]) -> set[str]:
        records = self.db.batch_get([key(f"MW#{workspace_id}", f"WB#{w}") for w in sorted(stages)], consistent=True)
        return {(get_s(r, "sk") or "")[3:] for r in records if get_s(r, "status") == "committed"}

    def items(self, workspace_id: str, memory_ids: Sequence[int], prefix: str) -> dict[int, dict[str, Any]]:
        """Consistent reads of the M# (record) or V# (vector + facets) items: the truth index hits are checked on."""
        keys = [key(f"MW#{workspace_id}", prefix + mid(i)) for i in dict.fromkeys(memory_ids)]
        found = self.db.batch_get(keys, consistent=True)
        return {get_n(item, "memory_id"): item for item in self.published(workspace_id, found)}

    def pending(self, workspace_id: str, indexed_since: float) -> set[int]:
        """Memories the index may not show yet: unindexed ones, and those indexed at or after `indexed_since`."""
        low = f"P#{int(indexed_since * 1000):013d}"
        return {get_n(i, "memory_id") for i in self.db.query(
            ConsistentRead=True, ProjectionExpression="memory_id",
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={":pk": s(f"MW#{workspace_id}"), ":low": s(low), ":high": s("P#~~")})}

    def unindexed(self, workspace_id: str, limit: int | None = None) -> list[int]:
        """Memories whose index write has not succeeded yet (oldest id first)."""
        kwargs: dict[str, Any] = {"ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
                                  "ExpressionAttributeValues": {":pk": s(f"MW#{workspace_id}"), ":p": s("P#~")}}
        if limit is not None:
            page = self.db.query_page(Limit=limit, **kwargs)
            return [get_n(i, "memory_id") for i in page.get("Items", [])]
        return [get_n(i, "memory_id") for i in self.db.query(**kwargs)]

    def mark_unindexed(self, workspace_id: str, memory_ids: Sequence[int]) -> None:
        self.db.batch_write([{"PutRequest": {"Item": unindexed_marker(workspace_id, i)}}
                             for i in dict.fromkeys(memory_ids)])

    def mark_indexed(self, workspace_id: str, memory_ids: Sequence[int], now: float) -> None:
        """The index accepted these documents at `now`: pending for the refresh lag, then gone (TTL)."""
        ms = f"{int(now * 1000):013d}"
        requests: list[dict[str, Any]] = []
        for memory_id in dict.fromkeys(memory_ids):
            requests.append({"DeleteRequest": {"Key": key(f"MW#{workspace_id}", "P#~" + mid(memory_id))}})
            requests.append({"PutRequest": {"Item": {
                **key(f"MW#{workspace_id}", f"P#{ms}#{mid(memory_id)}"), "memory_id": n(memory_id),
                "ttl": n(int(now) + MARKER_TTL_S)}}})
        self.db.batch_write(requests)

    def memory_ids(self, workspace_id: str) -> list[int]:
        """Every memory id of the workspace (the reindex path: reads the whole M# range)."""
        return [get_n(i, "memory_id") for i in self.db.query(
            ProjectionExpression="memory_id", KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": s(f"MW#{workspace_id}"), ":prefix": s("M#")})]
