"""The knowledge graph port (issue 5; shared with recall)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.graph.records import (
        EntityRecord,
        GraphBatch,
        GraphMatchPage,
        GraphMatchQuery,
        NeighbourhoodTotals,
        ProofRecord,
        RelationRecord,
        WriteCounts,
    )


class GraphStore(Protocol):
    """Entities, relations and proofs per workspace. Every bound (caps, limits) is applied inside the query.

    Shared with recall: memories add weighted, proof-less relations (to workspace entities or to ids of recall's
    own entity space, never stored as entities); graph search only ever returns relations that carry proofs.
    """

    def upsert(self, workspace_id: str, batch: GraphBatch) -> WriteCounts:
        """Batch upsert by id (and removal of `batch.removed_entities`), planned by services.graph_changes; atomic on
        the embedded engine. Bumps the graph version only when stored content actually changed."""
        ...

    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]: ...

    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]: ...

    def identity_owners(self, workspace_id: str, identities: Sequence[tuple[str, str, str]]) -> dict[
            tuple[str, str, str], str]:
        """(kind, project id or "", identity key) -> the entity id that holds it."""
        ...

    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(entity count of the workspace, document frequency per term)."""
        ...

    def match_entities(self, query: GraphMatchQuery) -> GraphMatchPage:
        """Ranked matches (tier, score, kind, label, id) with the kind/project scope applied before ranking."""
        ...

    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[EntityRecord]: ...

    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[ProofRecord]: ...

    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[RelationRecord]]:
        """Per entity: its proven relations (either direction), best trust/confidence first then id, capped."""
        ...

    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> NeighbourhoodTotals: ...

    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], min_weight: float,
                   per_entity_cap: int) -> list[tuple[str, str, str, float]]:
        """One bounded BFS step: (from, to, kind, weight) with weight >= min_weight, heaviest first, capped."""
        ...

    def source_hash(self, workspace_id: str) -> str:
        """sha256 of the canonical timestamp-free graph; cached per graph version."""
        ...

    def workspaces(self) -> list[str]:
        """Every workspace that holds a graph (operator commands: migration)."""
        ...

    def export(self, workspace_id: str) -> tuple[list[str], list[RelationRecord], list[str]]:
        """Everything stored for a workspace, by id: entity documents, relations, proof documents (as stored)."""
        ...

    def export_ids(self, workspace_id: str, kind: str, after: str, limit: int) -> list[str]:
        """A page of the ids of the workspace's `kind` ("entities" or "proofs") after `after` ("": from the first),
        in id order (an export reads the graph a page at a time)."""
        ...

    def export_relations(self, workspace_id: str, after: str, limit: int) -> list[RelationRecord]:
        """A page of the workspace's relations after the id `after`, in id order."""
        ...
