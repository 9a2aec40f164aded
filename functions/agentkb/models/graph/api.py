"""Knowledge-graph models: the write batch, the search request, and the store's records.

The public shapes (entity, relation, proof) are `schemas/workspace-knowledge-graph.v1.schema.json`; the search
response is `schemas/workspace-knowledge-search.v1.schema.json`.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import ConfigDict, Field, FiniteFloat, StrictBool, StrictInt, StrictStr, field_validator

from agentkb.models.base import Model
from agentkb.models.bounds import MAX_ID, MAX_TIMESTAMP

# The upstream enums (workspace-knowledge-graph.v1), exactly: entity kinds, relation kinds, and the evidence scales.
EntityKind = Literal[
    "workspace", "project", "service", "api", "endpoint", "schema", "protocol", "language", "package", "runtime-unit",
    "lifecycle-stage", "module", "file", "symbol", "database", "queue", "container", "deployment", "pipeline",
    "environment", "document", "decision", "test-suite", "owner",
]
RelationKind = Literal[
    "contains", "defines", "imports", "depends-on", "exposes", "implements", "implements-protocol", "uses-language",
    "equivalent-to", "calls", "reads-from", "writes-to", "publishes", "consumes", "deploys", "runs-on", "routes-to",
    "documents", "decided-by", "tests", "owns", "generated-by", "generated-from", "configured-by", "references",
]
Derivation = Literal["extracted", "inferred", "authored"]
Trust = Literal["authoritative", "corroborated", "observed", "ambiguous"]
Confidence = Literal["high", "medium", "low"]
Freshness = Literal["fresh", "stale", "unknown"]
Projection = Literal["full", "agent"]

ENTITY_KINDS: tuple[str, ...] = get_args(EntityKind)
RELATION_KINDS: tuple[str, ...] = get_args(RelationKind)
TRUST_LEVELS: tuple[str, ...] = get_args(Trust)
CONFIDENCE_LEVELS: tuple[str, ...] = get_args(Confidence)

Sha256Hex = Annotated[str, Field(pattern=r"^[a-f0-9]{64}$")]
GraphId = Annotated[str, Field(min_length=1, max_length=MAX_ID)]
MAX_ATTRIBUTE_TEXT = 8192  # an attribute's text (a signature, a summary): above what extractors emit
Scalar = StrictBool | StrictInt | FiniteFloat | Annotated[StrictStr, Field(max_length=MAX_ATTRIBUTE_TEXT)] | None
AttributeValue = Scalar | Annotated[list[Scalar], Field(max_length=1000)]
ProofIds = Annotated[list[GraphId], Field(max_length=256)]

MAX_BATCH_ITEMS = 10_000
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:([\\/]|$)")
# RFC 3339 date-time (JSON Schema `format: date-time`): a time and an offset are required, unlike ISO 8601 dates.
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def is_absolute_local_path(artifact: str) -> bool:
    """True for `/x`, `\\\\host\\x`, `C:\\x`, `~/x` and any `file:` URI: paths that only mean something on one disk."""
    text = artifact.strip()
    return (
        text.startswith(("/", "\\", "~"))
        or bool(_WINDOWS_DRIVE.match(text))
        or text.lower().startswith("file:")
    )


def _unique(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("proofIds must be unique")
    return values


class _Strict(Model):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Identity(_Strict):
    key: Annotated[str, Field(min_length=1, max_length=512)]
    scope: Literal["workspace", "project"]
    aliases: Annotated[list[Annotated[str, Field(max_length=256)]], Field(max_length=256)]
    fingerprint: Sha256Hex


class GraphEntity(_Strict):
    """An upstream `entities` item."""

    id: GraphId
    kind: EntityKind
    label: Annotated[str, Field(min_length=1, max_length=512)]
    projectId: GraphId | None = None
    identity: Identity
    attributes: Annotated[dict[Annotated[str, Field(max_length=MAX_ID)], AttributeValue], Field(max_length=128)]
    proofIds: ProofIds

    _unique_proofs = field_validator("proofIds")(_unique)


class GraphRelation(_Strict):
    """An upstream `relations` item: at least one proof."""

    id: GraphId
    from_: GraphId = Field(alias="from")
    to: GraphId
    kind: RelationKind
    derivation: Derivation
    trust: Trust
    confidence: Confidence
    proofIds: Annotated[list[GraphId], Field(min_length=1, max_length=256)]

    _unique_proofs = field_validator("proofIds")(_unique)


class GraphProof(_Strict):
    """An upstream `proofs` item."""

    id: GraphId
    provider: Annotated[str, Field(min_length=1, max_length=128)]
    artifact: Annotated[str, Field(min_length=1, max_length=2048)]
    pointer: Annotated[str, Field(max_length=1024)] | None = None
    line: Annotated[StrictInt, Field(ge=1)] | None = None
    column: Annotated[StrictInt, Field(ge=1)] | None = None
    contentHash: Sha256Hex | None = None
    observedAt: Annotated[str, Field(max_length=MAX_TIMESTAMP)]
    derivation: Derivation
    trust: Trust
    confidence: Confidence
    freshness: Freshness
    detail: Annotated[str, Field(max_length=4096)] | None = None

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
            if not _RFC3339.match(value):
                raise ValueError(value)
            datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError("observedAt must be an RFC 3339 date-time") from exc
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

    workspaceId: GraphId = Field(description="Workspace whose graph is searched.")
    query: Annotated[str, Field(min_length=1, max_length=512)] = Field(
        description="Entity name or words to match (1..512 characters).")
    kind: EntityKind | None = Field(None, description="Only entities of this kind.")
    projectId: GraphId | None = Field(None, description="Only this project's entities.")
    limit: Annotated[int, Field(ge=1, le=100)] = Field(12, description="Maximum entities (1..100, default 12).")
    projection: Projection = Field("full", description="full (every field) or agent (compact, budgeted).")


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
