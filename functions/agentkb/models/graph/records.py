"""The graph store's records and queries: plain frozen dataclasses (the hot path builds thousands of them).

`doc()` of a record is its public JSON shape: the item a graph-search response carries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class EntityRecord:
    """An entity as stored. `doc` is its public JSON shape (the search response's entity item)."""

    id: str
    kind: str
    label: str
    project_id: str | None
    identity_key: str
    identity_scope: str
    aliases: tuple[str, ...]
    fingerprint: str
    attributes: dict[str, Any] = field(default_factory=dict)
    proof_ids: tuple[str, ...] = ()

    def doc(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "label": self.label}
        if self.project_id:
            out["projectId"] = self.project_id
        out["identity"] = {"key": self.identity_key, "scope": self.identity_scope,
                           "aliases": list(self.aliases), "fingerprint": self.fingerprint}
        out["attributes"] = self.attributes
        out["proofIds"] = list(self.proof_ids)
        return out


@dataclass(frozen=True, slots=True)
class RelationRecord:
    """A relation as stored. Memory-derived relations may carry no proofs; graph search only returns proven ones."""

    id: str
    from_id: str
    to_id: str
    kind: str
    derivation: str = "inferred"
    trust: str = "observed"
    confidence: str = "medium"
    weight: float | None = None  # 0..1; None derives it from confidence
    proof_ids: tuple[str, ...] = ()

    def doc(self) -> dict[str, Any]:
        return {"id": self.id, "from": self.from_id, "to": self.to_id, "kind": self.kind,
                "derivation": self.derivation, "trust": self.trust, "confidence": self.confidence,
                "proofIds": list(self.proof_ids)}


@dataclass(frozen=True, slots=True)
class ProofRecord:
    """A proof as stored: the upstream proof item, field for field."""

    id: str
    provider: str
    artifact: str
    observed_at: str
    derivation: str
    trust: str
    confidence: str
    freshness: str
    content_hash: str | None = None
    pointer: str | None = None
    line: int | None = None
    column: int | None = None
    detail: str | None = None

    def doc(self, *, with_timestamp: bool = True) -> dict[str, Any]:
        """The upstream item (optional fields only when set); without observedAt for the timestamp-free hash."""
        out: dict[str, Any] = {"id": self.id, "provider": self.provider, "artifact": self.artifact}
        optional = {"pointer": self.pointer, "line": self.line, "column": self.column,
                    "contentHash": self.content_hash}
        out.update({name: value for name, value in optional.items() if value is not None})
        if with_timestamp:
            out["observedAt"] = self.observed_at
        out.update(derivation=self.derivation, trust=self.trust, confidence=self.confidence,
                   freshness=self.freshness)
        if self.detail is not None:
            out["detail"] = self.detail
        return out


@dataclass(frozen=True, slots=True)
class GraphBatch:
    entities: tuple[EntityRecord, ...] = ()
    relations: tuple[RelationRecord, ...] = ()
    proofs: tuple[ProofRecord, ...] = ()
    removed_entities: tuple[str, ...] = ()  # ids to delete (a migration's memory stubs): index, names and identity


@dataclass(frozen=True, slots=True)
class GraphMatchQuery:
    """What the store matches: normalised text for exact/prefix tiers, weighted terms for the term tier."""

    workspace_id: str
    text: str  # lowercased, whitespace-collapsed query
    matching_terms: tuple[tuple[str, int], ...]  # (term, integer weight): a posting makes an entity a match
    boost_terms: tuple[tuple[str, int], ...]  # too common to match on their own: they only add to the score
    coverage_bonus: int  # added per matched query term
    limit: int
    kind: str | None = None
    project_id: str | None = None


@dataclass(frozen=True, slots=True)
class GraphMatch:
    entity_id: str
    tier: int  # 3 exact, 2 prefix, 1 terms
    score: int


@dataclass(frozen=True, slots=True)
class GraphMatchPage:
    total: int
    matches: tuple[GraphMatch, ...]


@dataclass(frozen=True, slots=True)
class NeighbourhoodTotals:
    """Exact sizes of the full 1-hop neighbourhood of a set of entities (proven relations only)."""

    relations: int
    related_entities: int


@dataclass(frozen=True, slots=True)
class WriteCounts:
    entities: int
    relations: int
    proofs: int
    changed: bool
