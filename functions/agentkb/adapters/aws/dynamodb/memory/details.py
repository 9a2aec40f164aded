"""The DynamoDB memory store's non-recall operations: one memory in full, listings, in-place changes, forgetting.

Listings read the workspace's M# range newest first (descending sort key) with the filters as a FilterExpression,
page after page until the page is full. A change is one TransactWriteItems over the M# and V# items (conditional on
both existing). Forgetting deletes every revision of the memory's name: M#, V#, unindexed markers, the live-name
pointer, entity links and idempotency records; deletes are idempotent, so a retried delete completes one that
failed half way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import change_updates, detail, mid, set_expression
from agentkb.adapters.aws.dynamodb.memory.markers import DynamoDbMemoryMarkers
from agentkb.adapters.aws.dynamodb.memory.match import filter_expression
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n, s
from agentkb.errors import Conflict
from agentkb.models.eligibility import LISTING_STATUS
from agentkb.models.memory.detail import MemoryChange, MemoryDetail, MemoryListQuery, MemoryPage, name_key, viewable


def list_filter(query: MemoryListQuery) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """(filter clauses, attribute names, attribute values) of a listing's filters."""
    clauses: list[str] = []
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    for field in ("project_id", "type"):
        if getattr(query, field) is not None:
            names[f"#{field}"] = field
            values[f":{field}"] = s(getattr(query, field))
            clauses.append(f"#{field} = :{field}")
    if query.name_prefix is not None:
        names["#name"] = "name"
        values[":name_prefix"] = s(query.name_prefix)
        clauses.append("begins_with(#name, :name_prefix)")
    if query.status is not None:
        status, status_values = filter_expression(LISTING_STATUS[query.status])
        values.update(status_values)
        clauses.append(status)
    if query.labels or query.label_prefix is not None:
        names["#labels"] = "labels"
    for position, (label, value) in enumerate(sorted(query.labels.items())):
        names[f"#l{position}"] = label
        values[f":l{position}"] = s(value)
        clauses.append(f"#labels.#l{position} = :l{position}")
    if query.viewer is not None:  # the owner rule inside the query, so a page is full
        names["#vis"] = "visibility"
        values.update({":personal": s("personal"), ":viewer": s(query.viewer)})
        clauses.append("(#vis <> :personal OR owner_id = :viewer)")
    if query.label_prefix is not None:
        names["#lp"] = query.label_prefix[0]
        values[":lp"] = s(query.label_prefix[1])
        clauses.append("begins_with(#labels.#lp, :lp)")
    return clauses, names, values


class DynamoDbMemoryDetails:
    """get / list_memories / update / delete of the MemoryStore port on the memory table."""

    def __init__(self, db: DynamoDbTable, markers: DynamoDbMemoryMarkers) -> None:
        self.db = db
        self.markers = markers

    def get(self, workspace_id: str, memory_id: int, viewer: str | None = None) -> MemoryDetail | None:
        return self.get_many(workspace_id, [memory_id], viewer).get(memory_id)

    def get_many(self, workspace_id: str, memory_ids: Sequence[int],
                 viewer: str | None = None) -> dict[int, MemoryDetail]:
        """Consistent BatchGetItem (pages of 100, unprocessed keys retried): read-after-write for recall's details.
        The owner rule is checked on the read item (a key lookup has no filter; the result is the same)."""
        out: dict[int, MemoryDetail] = {}
        for memory_id, item in self.markers.items(workspace_id, memory_ids, "M#").items():
            memory = detail(item)
            if viewable(memory, viewer):
                out[memory_id] = memory
        return out

    def list_memories(self, query: MemoryListQuery) -> MemoryPage:
        clauses, names, values = list_filter(query)
        high = "M#" + mid(query.before_id) if query.before_id is not None else "M#~"
        kwargs: dict[str, Any] = {
            "ConsistentRead": True, "ScanIndexForward": False,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :low AND :high",
            "ExpressionAttributeValues": {":pk": s(f"MW#{query.workspace_id}"), ":low": s("M#"), ":high": s(high),
                                          **values}}
        if clauses:
            kwargs["FilterExpression"] = " AND ".join(clauses)
            kwargs["ExpressionAttributeNames"] = names
        items: list[MemoryDetail] = []
        committed: dict[str, bool] = {}
        for item in self.db.query(**kwargs):
            if query.before_id is not None and get_n(item, "memory_id") >= query.before_id:
                continue  # BETWEEN is inclusive: the cursor's own item was on the previous page
            stage = get_s(item, "wb")
            if stage is not None:  # of a staged write-back: listed once it committed (one lookup per stage)
                if stage not in committed:
                    committed[stage] = bool(self.markers.committed_stages(query.workspace_id, {stage}))
                if not committed[stage]:
                    continue
            items.append(detail(item))
            if len(items) > query.limit:
                break
        more = len(items) > query.limit
        items = items[:query.limit]
        return MemoryPage(items, items[-1].memory_id if more else None)

    def update(self, workspace_id: str, memory_id: int, change: MemoryChange) -> MemoryDetail | None:
        """Change one memory in place: its M# and V# items in one transaction; None when it does not exist."""
        ws, table = f"MW#{workspace_id}", self.db.table
        record, vector = change_updates(change)
        actions: list[dict[str, Any]] = []
        for prefix, attributes in (("M#", record), ("V#", vector)):
            if attributes:
                actions.append({"Update": {"TableName": table, "Key": key(ws, prefix + mid(memory_id)),
                                           **set_expression(attributes)}})
        # with an index, it must learn the change: the marker makes recall read the truth meanwhile
        actions += [{"Put": {"TableName": table, "Item": marker}}
                    for marker in self.markers.unindexed_items(workspace_id, memory_id)]
        moves = self._claim_move(ws, memory_id, change) if change.visibility or change.owner_id else []
        if actions:
            applied = self.db.conditional(lambda: self.db.client.transact_write_items(TransactItems=actions + moves))
            if not applied and moves and self.db.get_item(ws, "M#" + mid(memory_id)) is not None:
                raise Conflict("A live memory of the same name exists in that namespace")
            if not applied:
                return None
        return self.get(workspace_id, memory_id)

    def _claim_move(self, ws: str, memory_id: int, change: MemoryChange) -> list[dict[str, Any]]:
        """A live memory whose visibility or owner changes takes its name claim to its new namespace (the new key
        must be free: else the transaction fails and the change is a Conflict)."""
        item = self.db.get_item(ws, "M#" + mid(memory_id))
        if item is None or ("superseded" in item and get_n(item, "superseded")):
            return []  # a superseded revision holds no claim
        old = item_key(item)
        new = name_key(change.visibility or get_s(item, "visibility") or "",
                       change.owner_id if change.owner_id is not None else get_s(item, "owner_id"),
                       get_s(item, "name") or "")
        if new == old:
            return []
        prev = {":id": n(memory_id)}
        return [{"Delete": {"TableName": self.db.table, "Key": key(ws, old), "ExpressionAttributeValues": prev,
                            "ConditionExpression": "attribute_not_exists(pk) OR memory_id = :id"}},
                {"Put": {"TableName": self.db.table, "ConditionExpression": "attribute_not_exists(pk)",
                         "Item": {**key(ws, new), "memory_id": n(memory_id), "revision": item["revision"]}}}]

    def delete(self, workspace_id: str, memory_id: int) -> list[int]:
        """Forget every revision of the memory's name in its namespace (its own chain only); the ids deleted."""
        ws = f"MW#{workspace_id}"
        first = self.db.get_item(ws, "M#" + mid(memory_id))
        if first is None:
            return []
        name = get_s(first, "name") or ""
        own = item_key(first)
        revisions = [i for i in self.db.query(
            ConsistentRead=True, KeyConditionExpression="pk = :pk AND begins_with(sk, :m)",
            FilterExpression="#n = :name", ProjectionExpression="memory_id, entity_ids, visibility, owner_id, #n",
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={":pk": s(ws), ":m": s("M#"), ":name": s(name)}) if item_key(i) == own]
        ids = [get_n(i, "memory_id") for i in revisions]
        # its own claim, and an old-layout `N#` claim only while it still names this chain (never another's)
        keys = [key(ws, get_s(c, "sk") or "") for c in self.db.batch_get(
            [key(ws, k) for k in dict.fromkeys((own, "N#" + name))], consistent=True) if get_n(c, "memory_id") in ids]
        for item in revisions:
            memory = mid(get_n(item, "memory_id"))
            keys += [key(ws, prefix + memory) for prefix in ("M#", "V#", "P#~")]
            keys += [key(f"ME#{workspace_id}#{e}", memory) for e in json.loads(get_s(item, "entity_ids") or "[]")]
        keys += [key(ws, get_s(i, "sk") or "") for i in self.db.query(
            ConsistentRead=True, ProjectionExpression="pk, sk, memory_id",
            KeyConditionExpression="pk = :pk AND begins_with(sk, :i)",
            ExpressionAttributeValues={":pk": s(ws), ":i": s("I#")}) if get_n(i, "memory_id") in ids]
        unique = {json.dumps(k, sort_keys=True): k for k in keys}  # a batch must not name one key twice
        self.db.batch_write([{"DeleteRequest": {"Key": k}} for k in unique.values()])
        return ids


def item_key(item: dict[str, Any]) -> str:
    """The namespace key (models.memory_detail.name_key) of a stored M# item."""
    return name_key(get_s(item, "visibility") or "", get_s(item, "owner_id"), get_s(item, "name") or "")
