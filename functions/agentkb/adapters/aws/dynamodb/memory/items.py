"""The DynamoDB memory table's items as pure functions: building a revision's items, decoding them, in-place updates.

Key layout and facets: store.py. OB1 fields ride on the M# item: `labels` (a map of strings a listing
filters on) and `extra` (any JSON, as a string).
"""

from __future__ import annotations

import json
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.match import number, pack
from agentkb.adapters.aws.dynamodb.tables import get_n, get_s, key, n, s
from agentkb.models.memory.api import VISIBILITY_RANK, MemoryRecord, StoredMemory
from agentkb.models.memory.detail import MemoryChange, MemoryDetail

# An in-place change: which request field sets which M#/V# attributes (facets go on both items).
_FACET_CHANGES = ("confirmed", "stale")


def mid(memory_id: int) -> str:
    return f"{memory_id:012d}"


def revision_items(r: MemoryRecord, memory_id: int, revision: int,
                   supersedes: int | None) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """(the M# record, the V# vector item, the link items) of one revision."""
    facets: dict[str, Any] = {"memory_id": n(memory_id), "vis_rank": n(VISIBILITY_RANK[r.visibility]),
                              "sensitivity": n(r.sensitivity), "confirmed": n(int(r.confirmed)),
                              "stale": n(int(r.stale)), "superseded": n(0), "updated_at": n(float(r.updated_at))}
    for name, value in (("project_id", r.project_id), ("channel_id", r.channel_id), ("owner_id", r.owner_id)):
        if value is not None:
            facets[name] = s(value)
    if r.valid_until is not None:
        facets["valid_until"] = n(float(r.valid_until))
    ws = f"MW#{r.workspace_id}"
    record = {**key(ws, "M#" + mid(memory_id)), **facets, "workspace_id": s(r.workspace_id),
              "visibility": s(r.visibility), "type": s(r.type), "name": s(r.name),
              "description": s(r.description), "body": s(r.body), "revision": n(revision),
              "request_hash": s(r.request_hash), "created_at": s(r.created_at),
              "entity_ids": s(json.dumps(list(r.entity_ids))), "relation_count": n(r.relation_count)}
    if supersedes is not None:
        record["supersedes"] = n(supersedes)
    if r.source is not None:
        record["source"] = s(r.source)
    if r.occurred_at is not None:
        record["occurred_at"] = s(r.occurred_at)
    if r.labels:
        record["labels"] = {"M": {k: s(v) for k, v in r.labels.items()}}
    if r.extra:
        record["extra"] = s(json.dumps(dict(r.extra)))
    vector = {**key(ws, "V#" + mid(memory_id)), **facets, "embedding": {"B": pack(r.embedding)}}
    links = [{**key(f"ME#{r.workspace_id}#{e}", mid(memory_id)), "memory_id": n(memory_id)}
             for e in dict.fromkeys(r.entity_ids)]
    return record, vector, links


def meta_update(r: MemoryRecord) -> dict[str, Any]:
    """The UpdateItem arguments (TableName aside) that record the workspace's vector dimension on its first write."""
    return {"Key": key(f"MW#{r.workspace_id}", "#META"), "UpdateExpression": "SET dim = if_not_exists(dim, :d)",
            "ExpressionAttributeValues": {":d": n(len(r.embedding))}}


def summary(item: dict[str, Any]) -> StoredMemory:
    memory_id = get_n(item, "memory_id")
    supersedes = get_n(item, "supersedes", -1)
    response = {"memory_id": memory_id, "name": get_s(item, "name"), "revision": get_n(item, "revision"),
                "workspace_id": get_s(item, "workspace_id"), "project_id": get_s(item, "project_id"),
                "type": get_s(item, "type"), "visibility": get_s(item, "visibility"),
                "supersedes": None if supersedes < 0 else supersedes,
                "entity_ids": json.loads(get_s(item, "entity_ids") or "[]"),
                "relation_count": get_n(item, "relation_count"), "created_at": get_s(item, "created_at")}
    return StoredMemory(memory_id, get_s(item, "name") or "", get_n(item, "revision"),
                        get_s(item, "request_hash") or "", response)


def detail(item: dict[str, Any]) -> MemoryDetail:
    """Every field of an M# item."""
    supersedes = get_n(item, "supersedes", -1)
    return MemoryDetail(
        memory_id=get_n(item, "memory_id"), workspace_id=get_s(item, "workspace_id") or "",
        project_id=get_s(item, "project_id"), visibility=get_s(item, "visibility") or "",
        owner_id=get_s(item, "owner_id"), channel_id=get_s(item, "channel_id"), type=get_s(item, "type") or "",
        name=get_s(item, "name") or "", description=get_s(item, "description") or "", body=get_s(item, "body") or "",
        confirmed=bool(get_n(item, "confirmed")), stale=bool(get_n(item, "stale")),
        superseded=bool(get_n(item, "superseded")), revision=get_n(item, "revision"),
        supersedes=None if supersedes < 0 else supersedes,
        valid_until=number(item, "valid_until") if "valid_until" in item else None,
        sensitivity=get_n(item, "sensitivity"), source=get_s(item, "source"),
        created_at=get_s(item, "created_at") or "", updated_at=number(item, "updated_at"),
        entity_ids=tuple(json.loads(get_s(item, "entity_ids") or "[]")), relation_count=get_n(item, "relation_count"),
        occurred_at=get_s(item, "occurred_at"),
        labels={k: v["S"] for k, v in item.get("labels", {}).get("M", {}).items()},
        extra=json.loads(get_s(item, "extra") or "{}"))


def change_updates(change: MemoryChange) -> tuple[dict[str, Any], dict[str, Any]]:
    """(M# attributes, V# attributes) to SET for an in-place change."""
    facets: dict[str, Any] = {name: n(int(getattr(change, name))) for name in _FACET_CHANGES
                              if getattr(change, name) is not None}
    if change.visibility is not None:
        facets["vis_rank"] = n(VISIBILITY_RANK[change.visibility])
    if change.owner_id is not None:
        facets["owner_id"] = s(change.owner_id)
    if change.updated_at is not None:
        facets["updated_at"] = n(float(change.updated_at))
    record: dict[str, Any] = dict(facets)
    if change.visibility is not None:
        record["visibility"] = s(change.visibility)
    for name in ("description", "body"):
        if getattr(change, name) is not None:
            record[name] = s(getattr(change, name))
    if change.labels is not None:
        record["labels"] = {"M": {k: s(v) for k, v in change.labels.items()}}
    if change.extra is not None:
        record["extra"] = s(json.dumps(dict(change.extra)))
    vector = dict(facets)
    if change.embedding is not None:
        vector["embedding"] = {"B": pack(change.embedding)}
    return record, vector


def set_expression(attributes: dict[str, Any]) -> dict[str, Any]:
    """UpdateItem arguments that SET every attribute (names aliased: `name`-like words are reserved)."""
    names = {f"#a{i}": name for i, name in enumerate(attributes)}
    values = {f":a{i}": value for i, value in enumerate(attributes.values())}
    return {"UpdateExpression": "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(attributes))),
            "ExpressionAttributeNames": names, "ExpressionAttributeValues": values,
            "ConditionExpression": "attribute_exists(pk)"}
