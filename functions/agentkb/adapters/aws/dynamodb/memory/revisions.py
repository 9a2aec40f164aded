"""The DynamoDB memory store's single-memory writes and lookups: a new revision, its idempotency record, its id.

`insert` writes the entity links first (a link to a not-yet-committed id is invisible: every read intersects with
eligible items), then one TransactWriteItems: the record, its vector item, the live-name claim (conditional on the
name's current owner, names.py), the previous revision's `superseded` flag and the idempotency record.
"""

from __future__ import annotations

import json
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import meta_update, mid, revision_items, summary
from agentkb.adapters.aws.dynamodb.memory.markers import DynamoDbMemoryMarkers
from agentkb.adapters.aws.dynamodb.memory.names import DynamoDbMemoryNames
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n, s
from agentkb.errors import Conflict
from agentkb.models.memory.api import IdempotencyRecord, MemoryRecord, StoredMemory


def allocate_ids(db: DynamoDbTable, count: int) -> int:
    """The first of `count` fresh memory ids (one global counter, like SQLite's INTEGER PRIMARY KEY)."""
    out = db.update(Key=key("MSEQ", "#SEQ"), UpdateExpression="ADD #next :c", ExpressionAttributeNames={
        "#next": "next"}, ExpressionAttributeValues={":c": n(count)}, ReturnValues="UPDATED_NEW")
    return int(out["Attributes"]["next"]["N"]) - count + 1


def idempotency_sk(principal: str, idem_key: str) -> str:
    return "I#" + json.dumps([principal, idem_key], ensure_ascii=False, separators=(",", ":"))


class DynamoDbMemoryRevisions:
    """find_live / find_idempotent / insert of the MemoryStore port on the memory table."""

    def __init__(self, db: DynamoDbTable, markers: DynamoDbMemoryMarkers, names: DynamoDbMemoryNames) -> None:
        self.db = db
        self.markers = markers
        self.names = names

    def find_live(self, workspace_id: str, key: str) -> StoredMemory | None:
        pointer = self.db.get_item(f"MW#{workspace_id}", key)
        if pointer is None:
            return None
        item = self.db.get_item(f"MW#{workspace_id}", "M#" + mid(get_n(pointer, "memory_id")))
        return summary(item) if item else None

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        record = self.db.get_item(f"MW#{workspace_id}", idempotency_sk(principal, key))
        if record is None:
            return None
        item = self.db.get_item(f"MW#{workspace_id}", "M#" + mid(get_n(record, "memory_id")))
        return (get_s(record, "body_hash") or "", summary(item)) if item else None

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        ws, table = f"MW#{record.workspace_id}", self.db.table
        if idempotency is not None and self.db.get_item(ws, idempotency_sk(idempotency.principal, idempotency.key)):
            raise Conflict("This idempotency key was already used")
        memory_id = allocate_ids(self.db, 1)
        claim = self.names.claim(record, memory_id)
        previous, revision = claim.previous, claim.revision
        item, vector, links = revision_items(record, memory_id, revision, previous)
        self.db.batch_write([{"PutRequest": {"Item": link}} for link in links])
        actions: list[dict[str, Any]] = [*claim.actions, {"Put": {"TableName": table, "Item": item}},
                                         {"Put": {"TableName": table, "Item": vector}},
                                         {"Update": {"TableName": table, **meta_update(record)}}]
        if previous is not None:
            actions += [{"Update": {"TableName": table, "Key": key(ws, prefix + mid(previous)),
                                    "UpdateExpression": "SET superseded = :one",
                                    "ExpressionAttributeValues": {":one": n(1)}}} for prefix in ("M#", "V#")]
        actions += [{"Put": {"TableName": table, "Item": marker}}
                    for marker in self.markers.unindexed_items(record.workspace_id, memory_id)]
        if idempotency is not None:
            actions.append({"Put": {"TableName": table, "ConditionExpression": "attribute_not_exists(pk)",
                                    "Item": {**key(ws, idempotency_sk(idempotency.principal, idempotency.key)),
                                             "body_hash": s(idempotency.body_hash), "memory_id": n(memory_id)}}})
        self.db.transact(actions, conflict="A concurrent write to the same memory name or idempotency key won; retry")
        return summary(item)
