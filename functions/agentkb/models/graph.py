"""Knowledge-graph models: the write batch, the search request, and the store's records.

The public shapes (entity, relation, proof) are `schemas/workspace-knowledge-graph.v1.schema.json`; the search
response is `schemas/workspace-knowledge-search.v1.schema.json`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, FiniteFloat, StrictBool, StrictInt, StrictStr, field_validator

from agentkb.models.base import Model

ENTITY_KINDS: tuple[str, ...] = (
    "workspace", "project", "service", "api", "endpoint", "schema", "module", "file", "symbol", "database",
    "queue", "document", "decision", "test-suite", "owner", "person", "organization", "repo", "customer", "topic",
)
RELATION_KINDS: tuple[str, ...] = (
    "contains", "depends-on", "calls", "exposes", "implements", "defines", "reads", "writes", "publishes",
    "consumes", "owns", "maintains", "tests", "documents", "decides", "references", "uses", "member-of",
    "works-on", "mentions", "related-to",
)
TRUST_LEVELS: tuple[str, ...] = ("authoritative", "corroborated", "observed", "ambiguous")
CONFIDENCE_LEVELS: tuple[str, ...] = ("high", "medium", "low")

EntityKind = Literal[
    "workspace", "project", "service", "api", "endpoint", "schema", "module", "file", "symbol", "database",
    "queue", "document", "decision", "test-suite", "owner", "person", "organization", "repo", "customer", "topic",
]
RelationKind = Literal[
    "contains", "depends-on", "calls", "exposes", "implements", "defines", "reads", "writes", "publishes",
    "consumes", "owns", "maintains", "tests", "documents", "decides", "references", "uses", "member-of",
    "works-on", "mentions", "related-to",
]
Derivation = Literal["extracted", "inferred", "authored"]
Trust = Literal["authoritative", "corroborated", "observed", "ambiguous"]
Confidence = Literal["high", "medium", "low"]
Freshness = Literal["fresh", "stale", "unknown"]
Projection = Literal["full", "agent"]

Sha256Hex = Annotated[str, Field(pattern=r"^[a-f0-9]{64}$")]
GraphId = Annotated[str, Field(min_length=1, max_length=256)]
Scalar = StrictBool | StrictInt | FiniteFloat | StrictStr
AttributeValue = Scalar | Annotated[list[Scalar], Field(max_length=1000)]

MAX_BATCH_ITEMS = 10_000
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:([\\/]|$)")


def is_absolute_local_path(artifact: str) -> bool:
    """True for `/x`, `\\\\host\\x`, `C:\\x`, `~/x` and any `file:` URI: paths that only mean something on one disk."""
    text = artifact.strip()
    return (
        text.startswith(("/", "\\", "~"))
        or bool(_WINDOWS_DRIVE.match(text))
        or text.lower().startswith("file:")
    )


class _Strict(Model):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Identity(_Strict):
    key: Annotated[str, Field(min_length=1, max_length=512)]
    scope: Literal["workspace", "project"] = "workspace"
    aliases: Annotated[list[Annotated[str, Field(min_length=1, max_length=256)]], Field(max_length=256)] = []
    fingerprint: Sha256Hex | None = None


class GraphEntity(_Strict):
    id: GraphId
    kind: EntityKind
    label: Annotated[str, Field(min_length=1, max_length=512)]
    projectId: GraphId | None = None
    identity: Identity
    attributes: Annotated[dict[str, AttributeValue], Field(max_length=128)] = {}
    proofIds: Annotated[list[GraphId], Field(max_length=256)] = []


class GraphRelation(_Strict):
    id: GraphId
    from_: GraphId = Field(alias="from")
    to: GraphId
    kind: RelationKind
    derivation: Derivation
    trust: Trust
    confidence: Confidence
    proofIds: Annotated[list[GraphId], Field(min_length=1, max_length=256)]


class GraphProof(_Strict):
    id: GraphId
    provider: Annotated[str, Field(min_length=1, max_length=128)]
    artifact: Annotated[str, Field(min_length=1, max_length=2048)]
    pointer: Annotated[str, Field(min_length=1, max_length=1024)] | None = None
    line: Annotated[int, Field(ge=1)] | None = None
    column: Annotated[int, Field(ge=1)] | None = None
    contentHash: Sha256Hex
    observedAt: str
    freshness: Freshness = "unknown"

    @field_validator("artifact")
    @classmethod
    def _relative_artifact(cls, value: str) -> str:
        if is_absolute_local_path(value):
            raise ValueError("artifact must be a relative path or a URI, not an absolute local path")
        return value

    @field_validator("observedAt")
    @classmethod
    def _timestamp(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError("observedAt must be an ISO 8601 date-time") from exc
        return value


class GraphWriteRequest(_Strict):
    """`POST /v1/graph`: one atomic batch of upserts for a workspace (and optionally a project)."""

    workspaceId: GraphId
    projectId: GraphId | None = None
    entities: Annotated[list[GraphEntity], Field(max_length=MAX_BATCH_ITEMS)] = []
    relations: Annotated[list[GraphRelation], Field(max_length=MAX_BATCH_ITEMS)] = []
    proofs: Annotated[list[GraphProof], Field(max_length=MAX_BATCH_ITEMS)] = []


class GraphSearchRequest(_Strict):
    """`POST /v1/graph/search`."""

    workspaceId: GraphId
    query: Annotated[str, Field(min_length=1, max_length=512)]
    kind: EntityKind | None = None
    projectId: GraphId | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 12
    projection: Projection = "full"


# ---- store records (plain dataclasses: the hot path builds thousands of them) ----

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
    id: str
    provider: str
    artifact: str
    content_hash: str
    observed_at: str
    freshness: str = "unknown"
    pointer: str | None = None
    line: int | None = None
    column: int | None = None

    def doc(self, *, with_timestamp: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "provider": self.provider, "artifact": self.artifact}
        if self.pointer is not None:
            out["pointer"] = self.pointer
        if self.line is not None:
            out["line"] = self.line
        if self.column is not None:
            out["column"] = self.column
        out["contentHash"] = self.content_hash
        if with_timestamp:
            out["observedAt"] = self.observed_at
        out["freshness"] = self.freshness
        return out


@dataclass(frozen=True, slots=True)
class GraphBatch:
    entities: tuple[EntityRecord, ...] = ()
    relations: tuple[RelationRecord, ...] = ()
    proofs: tuple[ProofRecord, ...] = ()


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


# ---- text and canonical form: shared by the store (indexing, hashing) and the service (query terms) ----

_TOKEN = re.compile(r"[^\W_]+")
NAME_FIELD_WEIGHT = 2  # a term in the label, identity key or an alias counts double a term in an attribute
ATTRIBUTE_FIELD_WEIGHT = 1
MAX_QUERY_TERMS = 32


def normalise_text(text: str) -> str:
    """Lowercase with collapsed whitespace: how labels, keys, aliases and queries are compared for equality."""
    return " ".join(text.lower().split())


def tokenize(text: str) -> list[str]:
    """Lowercased alphanumeric runs (Unicode-aware); `billing-api/v2` -> [billing, api, v2]."""
    return _TOKEN.findall(text.lower())


def entity_terms(entity: EntityRecord) -> dict[str, int]:
    """Index terms of an entity with their field weight (the best field wins)."""
    terms: dict[str, int] = {}
    for value in _attribute_strings(entity.attributes):
        for term in tokenize(value):
            terms[term] = ATTRIBUTE_FIELD_WEIGHT
    for text in (entity.label, entity.identity_key, *entity.aliases):
        for term in tokenize(text):
            terms[term] = NAME_FIELD_WEIGHT
    return terms


def _attribute_strings(attributes: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for value in attributes.values():
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return out


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, UTF-8 text (no ASCII escaping): the one canonical form we hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def identity_fingerprint(kind: str, project_id: str | None, key: str) -> str:
    """Default identity fingerprint: sha256 of kind, project and identity key."""
    return hashlib.sha256(f"{kind}\n{project_id or ''}\n{key}".encode()).hexdigest()


# ---- response models (OpenAPI documentation; the JSON Schemas in schemas/ are the contracts) ----

class GraphWriteCounts(Model):
    entities: int
    relations: int
    proofs: int
    graphSourceHash: Sha256Hex


class GraphWriteResponse(Model):
    data: GraphWriteCounts


class GraphSearchResponse(Model):
    """`workspace-knowledge-search.v1` (schemas/workspace-knowledge-search.v1.schema.json)."""

    schemaVersion: Literal["workspace-knowledge-search.v1"]
    graphSourceHash: Sha256Hex
    query: str
    kind: EntityKind | None
    projectId: str | None = None
    limit: int
    totalMatches: int
    truncated: bool
    entities: list[dict[str, Any]]
    relatedEntities: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    proofs: list[dict[str, Any]]
    budget: dict[str, Any] | None = None
