"""Snapshot models: the `POST /v1/snapshots` request, the context-snapshot response and the store's records.

The response contract is `schemas/context-snapshot.schema.json` (the shared contract with its execution-scope
reference resolved locally); the pydantic response model below documents it in OpenAPI.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr, model_validator

from agentkb.models.base import Model
from agentkb.models.bounds import MAX_KNOWLEDGE_BASES, MAX_QUERY_CHARS, MAX_TAG_FILTERS
from agentkb.models.graph.api import EntityKind
from agentkb.models.search import KnowledgeSearchTagFilter

Classification = Literal["public", "internal", "confidential", "restricted"]
TrustTier = Literal["system-policy", "agent", "skill", "user", "trusted-knowledge", "tool-result",
                    "untrusted-external"]
ItemClass = Literal["task", "instructions", "skill", "code", "documents", "schema", "graph", "memory", "history",
                    "tool-result", "policy"]
ExclusionReason = Literal["denied", "stale", "budget", "classification", "duplicate"]
CLASSIFICATION_ORDER: dict[str, int] = {"public": 0, "internal": 1, "confidential": 2, "restricted": 3}

Id = Annotated[StrictStr, Field(min_length=1, max_length=128)]
# Any UUID version (the contract's `format: uuid`), normalised to lower case so ids derive deterministically.
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
Uuid = Annotated[StrictStr, Field(pattern=UUID_PATTERN), AfterValidator(str.lower)]
Text = Annotated[StrictStr, Field(min_length=1, max_length=200_000)]
MAX_INLINE_ITEMS = 200


class _Strict(Model):
    model_config = ConfigDict(extra="forbid", strict=True)


class ScopeIn(_Strict):
    """The execution scope the snapshot is built under (the principal comes from the caller's key)."""

    workspaceId: Id = Field(description="Workspace the snapshot is built in.")
    projectId: Id | None = None
    knowledgeBaseIds: Annotated[list[Id], Field(min_length=1, max_length=MAX_KNOWLEDGE_BASES)] | None = Field(
        None, description="Knowledge bases the attempt may see.")
    maxClassification: Classification
    allowedTrustTiers: Annotated[list[TrustTier], Field(min_length=1, max_length=7)] | None = None


class BudgetIn(_Strict):
    maxTokens: Annotated[StrictInt, Field(ge=1, le=1_000_000)]
    reservedForOutput: Annotated[StrictInt, Field(ge=0)] = 0

    @model_validator(mode="after")
    def _room_left(self) -> BudgetIn:
        if self.reservedForOutput >= self.maxTokens:
            raise ValueError("reservedForOutput must be smaller than maxTokens")
        return self


class InlineItem(_Strict):
    """Context the caller hands over verbatim (policy, instructions, tool results...), with its own labels."""

    # `class` is a Python keyword: the field is `class_` in code and `class` on the wire.
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)

    class_: ItemClass = Field(alias="class")
    content: Text
    trustTier: TrustTier
    classification: Classification
    sourceId: Id
    sourceRevision: Annotated[StrictStr, Field(min_length=1, max_length=256)]
    provenance: Annotated[StrictStr, Field(min_length=1, max_length=2048)] | None = None
    stale: StrictBool = False


class KnowledgeSource(_Strict):
    knowledgeBaseIds: Annotated[list[Id], Field(min_length=1, max_length=MAX_KNOWLEDGE_BASES)] = Field(
        description="Knowledge bases to retrieve from.")
    query: Annotated[StrictStr, Field(min_length=1, max_length=MAX_QUERY_CHARS)] | None = None
    tagFilters: Annotated[list[KnowledgeSearchTagFilter], Field(max_length=MAX_TAG_FILTERS)] | None = None
    topK: Annotated[StrictInt, Field(ge=1, le=100)] = 20


class MemorySource(_Strict):
    """Recall limits of the memory source (the recall request's `limits`, camelCased)."""

    query: Annotated[StrictStr, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
    maxItems: Annotated[StrictInt, Field(ge=1, le=50)] = 20
    maxTokens: Annotated[StrictInt, Field(ge=100, le=20000)] = 4000
    recencyDays: Annotated[StrictInt, Field(ge=1)] | None = None


class GraphSource(_Strict):
    query: Annotated[StrictStr, Field(min_length=1, max_length=512)]
    kind: EntityKind | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=100)] = 20


class Sources(_Strict):
    knowledge: KnowledgeSource | None = None
    memory: MemorySource | None = None
    graph: GraphSource | None = None


class CreateSnapshotRequest(_Strict):
    """`POST /v1/snapshots`: build (or replay) the context snapshot of one agent attempt."""

    model_config = ConfigDict(extra="forbid", strict=True, title="Create snapshot request")

    runId: Uuid = Field(description="UUID of the agent run.")
    attemptId: Uuid = Field(description="UUID of this attempt of the run.")
    stepId: Uuid | None = Field(None, description="UUID of the step, if any.")
    strategy: Annotated[StrictStr, Field(min_length=1, max_length=128)] | None = Field(
        None, description="Free-form strategy label.")
    scope: ScopeIn
    budget: BudgetIn = Field(description="maxTokens for the whole bundle, reservedForOutput kept free.")
    task: Text | None = Field(None, description="The task the attempt works on (always first in the bundle).")
    items: Annotated[list[InlineItem], Field(max_length=MAX_INLINE_ITEMS)] | None = Field(
        None, description="Inline items handed over verbatim, each with class, trust tier and classification.")
    sources: Sources | None = Field(None, description="Where to retrieve candidates from: knowledge, memory, graph.")


# ---- response (OpenAPI documentation; the JSON Schema in schemas/ is the contract) ----

class SnapshotBudgetOut(Model):
    maxTokens: int
    usedTokens: int
    reservedForOutput: int


class ContextSnapshotOut(Model):
    """`context-snapshot.schema.json`: items carry `content` besides the contract's fields."""

    model_config = ConfigDict(title="Context snapshot")

    snapshotId: str
    runId: str
    stepId: str | None = None
    attemptId: str
    scope: dict[str, Any]
    strategy: str | None = None
    budget: SnapshotBudgetOut
    items: list[dict[str, Any]]
    exclusions: list[dict[str, Any]]
    hash: str


# ---- service records (plain dataclasses) ----

@dataclass(frozen=True, slots=True)
class Candidate:
    """One piece of context before governance and packing. `key` is unique across sources."""

    key: str
    item_class: str
    content: str
    source_id: str
    source_revision: str
    chunk_id: str
    trust_tier: str
    classification: str
    provenance: str
    index_version: str | None = None
    embedding_profile: str | None = None
    stale: bool = False
    secret: bool = False  # a knowledge chunk carrying a detected secret: never packed (reason `classification`)


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    """A built snapshot as stored: the exact response bytes and the fingerprint of the request that built it."""

    snapshot_id: str
    workspace_id: str
    run_id: str
    attempt_id: str
    request_hash: str
    body: bytes
    created_at: str
