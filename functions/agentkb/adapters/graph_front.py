"""The GraphStore port as one front over three parts, the same in both engines: writes, reads, ranked matching.

Each engine builds the parts over its own storage (embedded/sqlite/graph/, aws/dynamodb/graph/) and hands them to
this front, which only passes each port method to the part that owns it. Written once here, so the two engines
share the shape and neither repeats the other's plumbing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agentkb.models.graph import records  # the port's record types (imported by every graph part anyway)

Identity = tuple[str, str, str]  # (kind, project id or "", identity key)
Export = tuple[list[str], list[records.RelationRecord], list[str]]


class GraphWrites(Protocol):
    def upsert(self, workspace_id: str, batch: records.GraphBatch) -> records.WriteCounts: ...


class GraphMatching(Protocol):
    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]: ...
    def match_entities(self, query: records.GraphMatchQuery) -> records.GraphMatchPage: ...


class GraphReads(Protocol):
    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]: ...
    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]: ...
    def identity_owners(self, workspace_id: str, identities: Sequence[Identity]) -> dict[Identity, str]: ...
    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[records.EntityRecord]: ...
    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[records.ProofRecord]: ...
    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[records.RelationRecord]]: ...
    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> records.NeighbourhoodTotals: ...
    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], min_weight: float,
                   per_entity_cap: int) -> list[tuple[str, str, str, float]]: ...
    def source_hash(self, workspace_id: str) -> str: ...
    def workspaces(self) -> list[str]: ...
    def export(self, workspace_id: str) -> Export: ...
    def export_ids(self, workspace_id: str, kind: str, after: str, limit: int) -> list[str]: ...
    def export_relations(self, workspace_id: str, after: str, limit: int) -> list[records.RelationRecord]: ...


class GraphStoreFront:
    """GraphStore port (ports/graph.py, where each method's contract is written) over an engine's three parts."""

    def __init__(self, writer: GraphWrites, reader: GraphReads, matcher: GraphMatching) -> None:
        self.writer = writer
        self.reader = reader
        self.matcher = matcher

    def upsert(self, workspace_id: str, batch: records.GraphBatch) -> records.WriteCounts:
        return self.writer.upsert(workspace_id, batch)

    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        return self.matcher.term_statistics(workspace_id, terms)

    def match_entities(self, query: records.GraphMatchQuery) -> records.GraphMatchPage:
        return self.matcher.match_entities(query)

    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return self.reader.existing_entity_ids(workspace_id, ids)

    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return self.reader.existing_proof_ids(workspace_id, ids)

    def identity_owners(self, workspace_id: str, identities: Sequence[Identity]) -> dict[Identity, str]:
        return self.reader.identity_owners(workspace_id, identities)

    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[records.EntityRecord]:
        return self.reader.entities(workspace_id, ids)

    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[records.ProofRecord]:
        return self.reader.proofs(workspace_id, ids)

    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[records.RelationRecord]]:
        return self.reader.proven_relations(workspace_id, entity_ids, per_entity_cap)

    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> records.NeighbourhoodTotals:
        return self.reader.neighbourhood_totals(workspace_id, entity_ids)

    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], min_weight: float,
                   per_entity_cap: int) -> list[tuple[str, str, str, float]]:
        return self.reader.neighbours(workspace_id, entity_ids, min_weight, per_entity_cap)

    def source_hash(self, workspace_id: str) -> str:
        return self.reader.source_hash(workspace_id)

    def workspaces(self) -> list[str]:
        return self.reader.workspaces()

    def export(self, workspace_id: str) -> Export:
        return self.reader.export(workspace_id)

    def export_ids(self, workspace_id: str, kind: str, after: str, limit: int) -> list[str]:
        return self.reader.export_ids(workspace_id, kind, after, limit)

    def export_relations(self, workspace_id: str, after: str, limit: int) -> list[records.RelationRecord]:
        return self.reader.export_relations(workspace_id, after, limit)
