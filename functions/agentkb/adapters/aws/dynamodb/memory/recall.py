"""The DynamoDB memory store's recall legs: exact cosine and term match over the eligible items, entity links.

Eligibility is the compiled predicate (models/eligibility.py) as a FilterExpression (`eligibility_filter`), applied
inside the Query before anything is ranked; linked memories are re-checked item by item (`is_eligible`). The
scale limit of ranking here alone is in store.py's docstring.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import mid
from agentkb.adapters.aws.dynamodb.memory.markers import DynamoDbMemoryMarkers
from agentkb.adapters.aws.dynamodb.memory.match import (
    cosine32,
    eligibility_filter,
    float32,
    is_eligible,
    number,
    query_terms,
    rank_by_cosine,
    term_match,
)
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, s
from agentkb.models.recall.api import MemoryView, RecallScope


class DynamoDbMemoryRecall:
    """The recall legs of the MemoryStore port on the memory table."""

    def __init__(self, db: DynamoDbTable, markers: DynamoDbMemoryMarkers) -> None:
        self.db = db
        self.markers = markers

    def _records(self, ws: str, ids: Sequence[int], prefix: str = "M#") -> dict[int, dict[str, Any]]:
        keys = [key(f"MW#{ws}", prefix + mid(i)) for i in dict.fromkeys(ids)]
        found = self.db.batch_get(keys)
        return {get_n(item, "memory_id"): item for item in self.markers.published(ws, found)}

    def _eligible(self, scope: RecallScope, prefix: str, projection: str | None = None) -> list[dict[str, Any]]:
        where, values = eligibility_filter(scope)
        kwargs: dict[str, Any] = {"ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
                                  "FilterExpression": where,
                                  "ExpressionAttributeValues": {":pk": s(f"MW#{scope.workspace_id}"),
                                                                ":prefix": s(prefix), **values}}
        if projection:
            kwargs["ProjectionExpression"] = projection
            if "#n" in projection:
                kwargs["ExpressionAttributeNames"] = {"#n": "name"}
        return self.markers.published(scope.workspace_id, list(self.db.query(**kwargs)))

    def vector_dimension(self, workspace_id: str) -> int | None:
        meta = self.db.get_item(f"MW#{workspace_id}", "#META")
        return get_n(meta, "dim") if meta and "dim" in meta else None

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
        """Exact cosine (dot product of L2-normalised vectors) over the eligible V# items, best first, then id."""
        items = ((get_n(item, "memory_id"), item)
                 for item in self._eligible(scope, "V#", projection="memory_id, embedding, wb"))
        return rank_by_cosine(items, vector, k, boosts)

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        query32 = float32(vector)
        return {memory_id: cosine32(item, query32)
                for memory_id, item in self._records(workspace_id, memory_ids, "V#").items()}

    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        terms = query_terms(text)
        if not terms:
            return []
        docs = [(get_n(item, "memory_id"), item)
                for item in self._eligible(scope, "M#", projection="memory_id, #n, description, body, wb")]
        return term_match(docs, terms)[:max(k, 0)]

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for memory_id, item in sorted(self._records(workspace_id, memory_ids).items()):
            entities = sorted(set(json.loads(get_s(item, "entity_ids") or "[]")))
            if entities:
                out[memory_id] = entities
        return out

    def linked_memories(self, scope: RecallScope, entity_ids: Sequence[str],
                        per_entity_cap: int) -> list[tuple[int, str]]:
        """Eligible linked memories, newest (updated_at, then id) first, at most `per_entity_cap` per entity.

        Reads each entity's links, then the linked V# items (consistent) and checks them with is_eligible: the cost
        follows the entities' degree, never the workspace's size.
        """
        links: dict[str, list[int]] = {}
        for entity_id in dict.fromkeys(entity_ids):
            links[entity_id] = [get_n(i, "memory_id") for i in self.db.query(
                ConsistentRead=True, ProjectionExpression="memory_id", KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": s(f"ME#{scope.workspace_id}#{entity_id}")})]
        items = self.markers.items(scope.workspace_id, [m for ids in links.values() for m in ids], "V#")
        updated = {m: number(i, "updated_at") for m, i in items.items() if is_eligible(i, scope)}
        out: list[tuple[int, str]] = []
        for entity_id, linked in links.items():
            ranked = sorted((m for m in linked if m in updated), key=lambda m: (-updated[m], -m))
            out += [(m, entity_id) for m in ranked[:per_entity_cap]]
        return out

    def views(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryView]:
        return {memory_id: MemoryView(memory_id=memory_id, name=get_s(item, "name") or "",
                                      namespace=get_s(item, "project_id") or get_s(item, "workspace_id") or "",
                                      type=get_s(item, "type") or "", description=get_s(item, "description") or "",
                                      snippet=(get_s(item, "body") or "")[:200])
                for memory_id, item in self._records(workspace_id, memory_ids).items()}
