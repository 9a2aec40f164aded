"""OB1 Agent Memory API requests (contracts/ob1-agent-memory.md), accepted as OB1's own server accepts them.

Both schema-version families; any `task_type` and `runtime.name`; omitted objects get OB1's defaults (`entities`,
`sensitivity`, `scope`, `limits`, `provenance`, ...). Unknown members are ignored, as OB1's server ignores them
(its clients send extras such as `reviewer`). Types and bounds are still checked: a wrong type is a 400.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictInt, StrictStr

from agentkb.models.base import Model
from agentkb.models.bounds import MAX_OPEN_KINDS, WorkspaceId

RECALL_VERSIONS = ("openbrain.agent_memory.recall.v1", "openbrain.openclaw.recall.v1")
WRITEBACK_VERSIONS = ("openbrain.agent_memory.writeback.v1", "openbrain.openclaw.writeback.v1")
ProvenanceStatus = Literal["observed", "inferred", "user_confirmed", "imported", "generated"]
ReviewAction = Literal["confirm", "edit", "evidence_only", "restrict_scope", "restrict", "mark_stale", "stale",
                       "merge", "reject", "dispute", "supersede"]
Text = Annotated[StrictStr, Field(max_length=20_000)]
Short = Annotated[StrictStr, Field(max_length=512)]
Strings = Annotated[list[Text], Field(max_length=100)]
# Entries per write-back, in all. OB1's server has no cap (its clients send at most ~35); this one bounds the work of
# one request (an embedding each, 2 MB of body) and is the same on both engines.
MAX_WRITEBACK_ROWS = 200
Entries = Annotated[list[Text], Field(max_length=MAX_WRITEBACK_ROWS)]
EntityMap = Annotated[dict[Short, Strings], Field(max_length=MAX_OPEN_KINDS)]


class _Lenient(Model):
    model_config = ConfigDict(extra="ignore", strict=True)


class Ob1Channel(_Lenient):
    kind: Short | None = None
    id: Short | None = None
    thread_id: Short | None = None


class Ob1Runtime(_Lenient):
    name: Short = "unknown"
    version: Short | None = None


class Ob1ModelIntent(_Lenient):
    provider: Short | None = None
    model: Short | None = None


class Ob1RecallScope(_Lenient):
    visibility: Short | None = None
    project_only: StrictBool = True
    include_unconfirmed: StrictBool = False
    include_stale: StrictBool = False


class Ob1RecallLimits(_Lenient):
    max_items: Annotated[StrictInt, Field(ge=1, le=50)] = 10
    max_tokens: Annotated[StrictInt, Field(ge=256, le=20_000)] = 4000
    recency_days: Annotated[StrictInt, Field(ge=1)] | None = None


class Ob1RecallRequest(_Lenient):
    """`POST /ob1/recall`."""

    model_config = ConfigDict(title="OB1 recall request", extra="ignore", strict=True)

    schema_version: Literal["openbrain.agent_memory.recall.v1", "openbrain.openclaw.recall.v1"]
    workspace_id: WorkspaceId
    project_id: Short | None = None
    task_id: Short | None = None
    flow_id: Short | None = None
    task_type: Short | None = None
    channel: Ob1Channel = Ob1Channel()
    runtime: Ob1Runtime = Ob1Runtime()
    model_intent: Ob1ModelIntent = Ob1ModelIntent()
    query: Annotated[StrictStr, Field(min_length=1, max_length=8192)]
    entities: EntityMap = {}
    scope: Ob1RecallScope = Ob1RecallScope()
    limits: Ob1RecallLimits = Ob1RecallLimits()
    sensitivity: Annotated[dict[Short, StrictBool], Field(max_length=MAX_OPEN_KINDS)] = {}


class Ob1ModelUsed(_Lenient):
    provider: Short
    model: Short
    role: Short


class Ob1SourceRef(_Lenient):
    kind: Short
    uri: Annotated[StrictStr, Field(max_length=2048)] | None = None
    title: Short | None = None
    timestamp: Short | None = None


class Ob1Artifact(_Lenient):
    kind: Short
    uri: Annotated[StrictStr, Field(max_length=2048)]
    description: Text | None = None


class Ob1MemoryPayload(_Lenient):
    decisions: Entries = []
    outputs: Entries = []
    lessons: Entries = []
    constraints: Entries = []
    unresolved_questions: Entries = []
    next_steps: Entries = []
    failures: Entries = []
    artifacts: Annotated[list[Ob1Artifact], Field(max_length=MAX_WRITEBACK_ROWS)] = []
    entities: EntityMap = {}


class Ob1Provenance(_Lenient):
    default_status: ProvenanceStatus = "generated"
    confidence: Annotated[float, Field(ge=0, le=1, strict=False)] = 0.5
    requires_review: StrictBool = True


class Ob1Retention(_Lenient):
    ttl_days: Annotated[StrictInt, Field(ge=1, le=36_500)] | None = None
    stale_after_days: Annotated[StrictInt, Field(ge=1, le=36_500)] | None = None


class Ob1Visibility(_Lenient):
    workspace: Short | None = None
    project: Short | None = None
    channel: Short | None = None


class Ob1WritebackRequest(_Lenient):
    """`POST /ob1/writeback`: compact operational memory after a task."""

    model_config = ConfigDict(title="OB1 write-back request", extra="ignore", strict=True)

    schema_version: Literal["openbrain.agent_memory.writeback.v1", "openbrain.openclaw.writeback.v1"]
    workspace_id: WorkspaceId
    project_id: Short | None = None
    task_id: Short | None = None
    flow_id: Short | None = None
    step_id: Short | None = None
    idempotency_key: Annotated[StrictStr, Field(min_length=1, max_length=512)] | None = None
    content_hash: Short | None = None
    channel: Ob1Channel = Ob1Channel()
    runtime: Ob1Runtime = Ob1Runtime()
    models_used: Annotated[list[Ob1ModelUsed], Field(max_length=20)] = []
    source_refs: Annotated[list[Ob1SourceRef], Field(max_length=50)] = []
    memory_payload: Ob1MemoryPayload
    provenance: Ob1Provenance = Ob1Provenance()
    retention: Ob1Retention = Ob1Retention()
    visibility: Ob1Visibility = Ob1Visibility()


class Ob1ListFilter(_Lenient):
    """The filters of `GET /ob1/memories` (query) and `POST /ob1/memories/list` (body, as the Hermes plugin sends)."""

    model_config = ConfigDict(title="OB1 memory list filters", extra="ignore", strict=True)

    workspace_id: WorkspaceId
    project_id: Short | None = None
    review_status: Short | None = None
    lifecycle_status: Short | None = None
    runtime_name: Short | None = None
    memory_type: Short | None = None
    task_id_prefix: Short | None = None
    limit: StrictInt = 50  # clamped to 1..200, as OB1's server does


class Ob1IgnoredMemory(_Lenient):
    memory_id: Short
    reason: Short | None = None


class Ob1UsageReport(_Lenient):
    """`POST /ob1/recall/{request_id}/usage`."""

    model_config = ConfigDict(title="OB1 usage report", extra="ignore", strict=True)

    used_memory_ids: Annotated[list[Short], Field(max_length=200)] = []
    ignored: Annotated[list[Ob1IgnoredMemory], Field(max_length=200)] = []


class Ob1ReviewRequest(_Lenient):
    """`PATCH /ob1/memories/{id}/review`. `restrict` and `stale` are accepted for restrict_scope and mark_stale."""

    model_config = ConfigDict(title="OB1 review action", extra="ignore", strict=True)

    action: ReviewAction
    actor_id: Short | None = None
    actor_label: Short | None = None
    notes: Text | None = None
    content: Annotated[StrictStr, Field(min_length=1, max_length=20_000)] | None = None
    summary: Annotated[StrictStr, Field(min_length=1, max_length=1024)] | None = None
    visibility: Literal["personal", "channel", "project", "workspace", "organization"] | None = None
    related_memory_id: Short | None = None
