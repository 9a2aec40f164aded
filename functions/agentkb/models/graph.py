"""Knowledge-graph models: the write batch, the search request, and the store's records.

The public shapes (entity, relation, proof) are `schemas/workspace-knowledge-graph.v1.schema.json`; the search
response is `schemas/workspace-knowledge-search.v1.schema.json`.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, FiniteFloat, StrictBool, StrictInt, StrictStr, field_validator

from agentkb.models.base import Model

# The store's records and the text rules live in their own modules; re-exported here, where callers look first.
from agentkb.models.graph_records import (
    EntityRecord,
    GraphBatch,
    GraphMatch,
    GraphMatchPage,
    GraphMatchQuery,
    NeighbourhoodTotals,
    ProofRecord,
    RelationRecord,
    WriteCounts,
)
from agentkb.models.graph_text import (
    MAX_QUERY_TERMS,
    canonical_json,
    entity_terms,
    identity_fingerprint,
    normalise_text,
    tokenize,
)

__all__ = [
    "CONFIDENCE_LEVELS", "MAX_BATCH_ITEMS", "MAX_QUERY_TERMS", "RELATION_KINDS", "TRUST_LEVELS", "ENTITY_KINDS",
    "EntityKind", "EntityRecord", "GraphBatch", "GraphEntity", "GraphMatch", "GraphMatchPage", "GraphMatchQuery",
    "GraphProof", "GraphRelation", "GraphSearchRequest", "GraphSearchResponse", "GraphWriteCounts",
    "GraphWriteRequest", "GraphWriteResponse", "Identity", "NeighbourhoodTotals", "ProofRecord", "RelationKind",
    "RelationRecord", "WriteCounts", "canonical_json", "entity_terms", "identity_fingerprint",
    "is_absolute_local_path", "normalise_text", "tokenize",
]

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
