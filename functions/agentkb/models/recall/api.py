"""Recall: the `openbrain.openclaw.recall.v1` request (exactly), the eligibility scope, the response models.

The request mirrors schemas/recall-request.v1.schema.json field for field (additionalProperties false
everywhere, JSON Schema integers accept 3.0 but not 3.5 or true); the response is
schemas/recall-response.schema.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictStr, field_validator

from agentkb.models.base import Model
from agentkb.models.bounds import MAX_ENTITIES_PER_KIND, MAX_ID, MAX_LABEL, MAX_QUERY_CHARS, WorkspaceId
from agentkb.models.memory.api import ENTITY_KINDS
from agentkb.models.numbers import JsonInt

TaskType = Literal["code_review", "taskflow_work_log", "meeting_to_execution", "incident_response",
                   "customer_feedback", "general"]
# The contract states no maxima; these bounds (models/bounds.py) are above any real client's and refuse, before any
# work, what only costs: a recall naming 200,000 entities took 9 s.
Ident = Annotated[StrictStr, Field(max_length=MAX_ID)]
Label = Annotated[StrictStr, Field(max_length=MAX_LABEL)]
Names = Annotated[list[Ident], Field(max_length=MAX_ENTITIES_PER_KIND)]


def _whole(value: int | float | None) -> int | None:
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError("must be an integer")
        return int(value)
    return value


class _Exact(Model):
    model_config = ConfigDict(extra="forbid", strict=True)


class RecallChannel(_Exact):
    kind: Ident | None = None
    id: Ident | None = None
    thread_id: Ident | None = None

    @field_validator("kind")
    @classmethod
    def _kind_not_null(cls, value: str | None) -> str | None:
        if value is None:  # the contract types kind as a string: optional, but never null
            raise ValueError("kind must be a string")
        return value


class RecallRuntime(_Exact):
    name: Literal["openclaw"] | None = None
    version: Label | None = None

    @field_validator("name")
    @classmethod
    def _name_not_null(cls, value: str | None) -> str | None:
        if value is None:
            raise ValueError("name must be 'openclaw'")
        return value


class RecallModelIntent(_Exact):
    provider: Label | None = None
    model: Label | None = None


class RecallEntities(_Exact):
    people: Names | None = None
    orgs: Names | None = None
    repos: Names | None = None
    files: Names | None = None
    customers: Names | None = None
    topics: Names | None = None

    @field_validator("*")
    @classmethod
    def _array_not_null(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            raise ValueError("must be an array of strings")
        return value

    def named(self) -> list[tuple[str, str]]:
        """(graph kind, name) of every named entity, in category order, duplicates and blanks dropped."""
        out = [(kind, n.strip()) for cat, kind in ENTITY_KINDS.items() for n in (getattr(self, cat) or [])]
        return list(dict.fromkeys((k, n) for k, n in out if n))


class RecallScopeIn(_Exact):
    visibility: Literal["personal", "channel", "project", "workspace", "organization"]
    project_only: StrictBool
    include_unconfirmed: StrictBool
    include_stale: StrictBool


class RecallLimits(_Exact):
    max_items: Annotated[JsonInt, Field(ge=1, le=50)]
    max_tokens: Annotated[JsonInt, Field(ge=100, le=20000)]
    recency_days: Annotated[JsonInt, Field(ge=1)] | None = None

    @field_validator("max_items", "max_tokens", "recency_days")
    @classmethod
    def _integers(cls, value: int | float | None) -> int | None:
        return _whole(value)


class RecallSensitivity(_Exact):
    contains_code: StrictBool
    contains_customer_data: StrictBool
    contains_private_meeting_data: StrictBool


class RecallRequest(_Exact):
    """`POST /v1/recall` body: recall-request.v1, exactly (any deviation is a 400)."""

    model_config = ConfigDict(title="Recall request", extra="forbid", strict=True)

    schema_version: Literal["openbrain.openclaw.recall.v1"] = Field(description="The recall request version.")
    workspace_id: WorkspaceId = Field(description="Workspace whose memories are recalled.")
    project_id: Ident | None = Field(None, description="Project context (project memories need it).")
    task_id: Ident | None = Field(None, description="Caller's task id.")
    flow_id: Ident | None = Field(None, description="Caller's flow id.")
    task_type: TaskType = Field(description="The kind of task the memories are for.")
    channel: RecallChannel | None = Field(None, description="Channel context.")
    runtime: RecallRuntime | None = Field(None, description="Calling runtime.")
    model_intent: RecallModelIntent | None = Field(None, description="Model the recall is for.")
    query: Annotated[StrictStr, Field(min_length=1, max_length=MAX_QUERY_CHARS)] = Field(description="What to recall.")
    entities: RecallEntities = Field(
        description="Named people, orgs, repos, files, customers, topics: seeds of the graph leg.")
    scope: RecallScopeIn = Field(
        description="Audience and eligibility: visibility, project_only, include_unconfirmed, include_stale.")
    limits: RecallLimits = Field(description="max_items (1..50), max_tokens (100..20000), recency_days.")
    sensitivity: RecallSensitivity = Field(
        description="What the answer may contain (code, customer data, private meeting data).")

    @field_validator("channel", "runtime", "model_intent")
    @classmethod
    def _object_not_null(cls, value: Any) -> Any:
        if value is None:  # optional in the contract, but an object when present
            raise ValueError("must be an object")
        return value


# ---- what the store filters on (inside its retrieval queries, before ranking) -------------------------------------

@dataclass(frozen=True, slots=True)
class RecallScope:
    """Eligibility of memories for one recall: every field becomes part of the SQL WHERE clause."""

    workspace_id: str
    audience_rank: int  # VISIBILITY_RANK of the requested audience
    principal_id: str
    project_id: str | None
    channel_id: str | None
    project_only: bool
    include_unconfirmed: bool
    include_stale: bool
    now: float
    since: float | None  # recency window start (epoch seconds) or None
    allowed_sensitivity: int  # bits the request declares


# ---- response models (schemas/recall-response.schema.json is the contract) ---------------------------------------
# The recall service returns a RecallResponse; the route writes it with exclude_unset, so a field is present exactly
# when the service set it (agent_surface, graph_depth, the vec_* fields; vec_error may be set to null).

class MemoryView(Model):
    """The fields of a memory a recall item shows, as the store reads them."""

    model_config = ConfigDict(frozen=True)

    memory_id: int
    name: str
    namespace: str
    type: str
    description: str
    snippet: str


class RecallItem(MemoryView):
    distance: float
    score: Annotated[float, Field(ge=0, le=1)]
    source: Literal["direct", "fts_fallback", "graph"]
    graph_depth: Annotated[int, Field(ge=0)] | None = None


class AgentSurface(Model):
    """Upstream's AgentSurfaceMeta: present only when max_items or max_tokens removed something."""

    input_count: Annotated[int, Field(ge=0)]
    output_count: Annotated[int, Field(ge=0)]
    max_items: Annotated[int, Field(ge=1)] | None = None  # present when the max_items cap cut candidates
    content_truncated: bool | None = None  # present (true) when an item's text was shortened
    output_truncated: bool | None = None  # present (true) when items were dropped to fit max_tokens
    dropped: Annotated[int, Field(ge=0)] | None = None  # only alongside output_truncated


class RecallResponse(Model):
    model_config = ConfigDict(title="Recall response")

    agent_surface: AgentSurface | None = None
    query: str
    k: int
    direct_matches: list[RecallItem]
    graph_matches: list[RecallItem]
    results: list[RecallItem]
    truncated: bool | None = None
    elapsed_ms: int
    backend_invoked: Literal["bedrock", "local", "none"] | None = None
    vec_degraded: bool | None = None
    vec_degraded_code: str | None = None
    vec_degraded_reason: str | None = None
    vec_error: str | None = None
    warning: str | None = None
