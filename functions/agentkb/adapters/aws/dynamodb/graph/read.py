"""Reads of the DynamoDB graph: records by id, capped neighbourhoods, exact totals, the cached source hash."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from agentkb.adapters.aws.dynamodb.graph.base import (
    STORE,
    DynamoDbGraphTable,
    descending_weight,
    identity_sk,
    relation_from_item,
)
from agentkb.adapters.aws.dynamodb.tables import get_n, get_s, guarded, key, n, s
from agentkb.adapters.aws.errors import client_error_code
from agentkb.models.graph.records import EntityRecord, NeighbourhoodTotals, ProofRecord, RelationRecord
from agentkb.services.graph.changes import decode_entity, decode_proof, in_order, source_hash


@dataclass(frozen=True, slots=True)
class DynamoDbGraphReader:
    """GraphStore reads over the graph table."""

    db: DynamoDbGraphTable

    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return {sk[2:] for _pk, sk in self.db.get_many((f"G#{workspace_id}", f"E#{i}") for i in ids)}

    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return {sk[2:] for _pk, sk in self.db.get_many((f"G#{workspace_id}", f"P#{i}") for i in ids)}

    def identity_owners(self, workspace_id: str,
                        identities: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        wanted = {identity_sk(*i): i for i in identities}
        found = self.db.get_many((f"GID#{workspace_id}", sk) for sk in wanted)
        return {wanted[sk]: get_s(item, "entity_id") or "" for (_pk, sk), item in found.items()}

    def _docs(self, workspace_id: str, prefix: str, ids: Sequence[str]) -> dict[str, str]:
        found = self.db.get_many((f"G#{workspace_id}", f"{prefix}{i}") for i in ids)
        return {sk[len(prefix):]: get_s(item, "doc") or "{}" for (_pk, sk), item in found.items()}

    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[EntityRecord]:
        return in_order(ids, {i: decode_entity(doc) for i, doc in self._docs(workspace_id, "E#", ids).items()})

    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[ProofRecord]:
        return in_order(ids, {i: decode_proof(doc) for i, doc in self._docs(workspace_id, "P#", ids).items()})

    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[RelationRecord]]:
        return {eid: [relation_from_item(i)
                      for i in self.db.partition(f"GAR#{workspace_id}#{eid}", limit=per_entity_cap)]
                if per_entity_cap > 0 else [] for eid in dict.fromkeys(entity_ids)}

    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> NeighbourhoodTotals:
        ids = set(entity_ids)
        relations = 0
        related: set[str] = set()
        for eid in dict.fromkeys(entity_ids):
            for item in self.db.partition(f"GAR#{workspace_id}#{eid}", projection="from_id, to_id"):
                a, b = item["from_id"]["S"], item["to_id"]["S"]
                if a == eid:  # outgoing: always counted
                    relations += 1
                    if b not in ids:
                        related.add(b)
                elif a not in ids:  # incoming from outside the set
                    relations += 1
                    related.add(a)
        return NeighbourhoodTotals(relations, len(related))

    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], min_weight: float,
                   per_entity_cap: int) -> list[tuple[str, str, str, float]]:
        if per_entity_cap <= 0:
            return []
        bound = s(descending_weight(float(min_weight)) + "$")  # "$" sorts right after the "#" separator
        out: list[tuple[str, str, str, float]] = []
        for eid in dict.fromkeys(entity_ids):
            for item in self.db.partition(f"GAW#{workspace_id}#{eid}", "sk < :b", {":b": bound}, limit=per_entity_cap):
                out.append((item["from_id"]["S"], item["to_id"]["S"], item["kind"]["S"], float(item["weight"]["N"])))
        return out

    def source_hash(self, workspace_id: str) -> str:
        g = f"G#{workspace_id}"
        for _attempt in range(5):
            meta = self.db.get_many([(g, "#META")]).get((g, "#META"))
            version = get_n(meta, "version") if meta else 0
            if meta is not None and "hash" in meta and get_n(meta, "hash_version", -1) == version:
                return get_s(meta, "hash") or ""
            digest = self._compute_hash(g)
            after = self.db.get_many([(g, "#META")]).get((g, "#META"))
            if (get_n(after, "version") if after else 0) != version:
                continue  # a write landed while hashing: hash the new version
            if meta is not None:
                try:
                    self.db.client.update_item(
                        TableName=self.db.table, Key=key(g, "#META"),
                        UpdateExpression="SET #h = :h, hash_version = :v", ConditionExpression="version = :v",
                        ExpressionAttributeNames={"#h": "hash"},
                        ExpressionAttributeValues={":h": s(digest), ":v": n(version)})
                except Exception as exc:  # best effort: a refused cache write still serves the hash
                    if client_error_code(exc) is None and not hasattr(exc, "response"):
                        raise
            return digest
        return self._compute_hash(g)
    def _compute_hash(self, g: str) -> str:
        """The shared source-hash framing over the canons of one partition, each section in id order."""
        return source_hash(*(self._canons(g, prefix) for prefix in ("E#", "P#", "R#")))

    def _canons(self, g: str, prefix: str) -> list[str]:
        """Canons in id order; relations only when proven (memory edges are recall's, not the searched graph)."""
        items = self.db.partition(g, "begins_with(sk, :p)", {":p": s(prefix)}, projection="sk, canon, proven")
        return [canon for _id, canon in sorted((item["sk"]["S"][2:], get_s(item, "canon") or "") for item in items
                                               if prefix != "R#" or get_n(item, "proven"))]

    def workspaces(self) -> list[str]:
        """A Scan for the #META items: an operator's command, never on a request path."""
        found: set[str] = set()
        kwargs: dict[str, Any] = {"TableName": self.db.table, "ProjectionExpression": "pk",
                                  "FilterExpression": "sk = :m AND begins_with(pk, :g)",
                                  "ExpressionAttributeValues": {":m": s("#META"), ":g": s("G#")}}
        while True:
            page = guarded(STORE, partial(self.db.client.scan, **kwargs))
            found.update(item["pk"]["S"][2:] for item in page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return sorted(found)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def export(self, workspace_id: str) -> tuple[list[str], list[RelationRecord], list[str]]:
        g = f"G#{workspace_id}"

        def items(prefix: str) -> list[dict[str, Any]]:
            found = self.db.partition(g, "begins_with(sk, :p)", {":p": s(prefix)})
            return sorted(found, key=lambda item: item["sk"]["S"])

        return ([get_s(i, "doc") or "{}" for i in items("E#")], [relation_from_item(i) for i in items("R#")],
                [get_s(i, "doc") or "{}" for i in items("P#")])

    def export_ids(self, workspace_id: str, kind: str, after: str, limit: int) -> list[str]:
        prefix = {"entities": "E#", "proofs": "P#"}[kind]
        return [item["sk"]["S"][2:] for item in self._export_page(workspace_id, prefix, after, limit, "sk")]

    def export_relations(self, workspace_id: str, after: str, limit: int) -> list[RelationRecord]:
        return [relation_from_item(i) for i in self._export_page(workspace_id, "R#", after, limit, None)]

    def _export_page(self, workspace_id: str, prefix: str, after: str, limit: int,
                     projection: str | None) -> list[dict[str, Any]]:
        """Up to `limit` items of the prefix after `prefix + after`, in sort key order (ExclusiveStartKey)."""
        g = f"G#{workspace_id}"
        kwargs: dict[str, Any] = {"TableName": self.db.table, "ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
                                  "ExpressionAttributeValues": {":pk": s(g), ":p": s(prefix)}}
        if projection:
            kwargs["ProjectionExpression"] = projection
        if after:
            kwargs["ExclusiveStartKey"] = key(g, prefix + after)
        items: list[dict[str, Any]] = []
        while len(items) < limit:
            kwargs["Limit"] = limit - len(items)
            page = guarded(STORE, partial(self.db.client.query, **kwargs))
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return items
