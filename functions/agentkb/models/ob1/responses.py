"""OB1 answers as response models: recall, write-back, listings and usage reports are what the services return;
the open inspection and trace answers document bodies the services build as dicts.

The recall and write-back memories mirror schemas/ob1-recall-response.v1.schema.json (which forbids extra members);
inspection and trace answers carry more than OB1's server returns, so they stay open.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict

from agentkb.models.base import Model


class Ob1Health(Model):
    model_config = ConfigDict(title="OB1 health")

    ok: bool
    service: str
    version: str


class Ob1Source(Model):
    kind: str | None = None
    uri: str | None = None
    title: str | None = None
    timestamp: str | None = None


class Ob1ProvenanceOut(Model):
    status: Literal["observed", "inferred", "user_confirmed", "imported", "generated"]
    confidence: float
    created_by: Literal["user", "agent", "system", "import"]
    model: str | None = None
    runtime: str | None = None


class Ob1ScopeOut(Model):
    workspace_id: str
    project_id: str | None = None
    channel_id: str | None = None
    visibility: Literal["personal", "channel", "project", "workspace", "organization"]


class Ob1UsePolicy(Model):
    can_use_as_instruction: bool
    can_use_as_evidence: bool
    requires_user_confirmation: bool


class Ob1Freshness(Model):
    created_at: str
    last_confirmed_at: str | None = None
    stale_after: str | None = None


class Ob1ArtifactRef(Model):
    kind: str
    uri: str


class Ob1Memory(Model):
    memory_id: str
    summary: str
    content: str
    source: Ob1Source
    provenance: Ob1ProvenanceOut
    scope: Ob1ScopeOut
    use_policy: Ob1UsePolicy
    freshness: Ob1Freshness
    related_artifacts: list[Ob1ArtifactRef]


class Ob1RecallResponse(Model):
    model_config = ConfigDict(title="OB1 recall response")

    schema_version: Literal["openbrain.agent_memory.recall_response.v1", "openbrain.openclaw.recall_response.v1"]
    request_id: str
    memories: list[Ob1Memory]


class Ob1WritebackResponse(Model):
    model_config = ConfigDict(title="OB1 write-back response")

    schema_version: Literal["openbrain.agent_memory.writeback_response.v1",
                            "openbrain.openclaw.writeback_response.v1"]
    memories: list[Ob1Memory]


class Ob1MemoryList(Model):
    model_config = ConfigDict(title="OB1 memory list")

    memories: list[Ob1Memory]
    count: int


class Ob1UsageAnswer(Model):
    ok: bool
    recorded: int


class Ob1MemoryRecord(Model):
    """One memory in full: state, use policy, source refs, artifacts, review history (more members follow)."""

    model_config = ConfigDict(extra="allow")

    id: str
    workspace_id: str
    review_status: str
    lifecycle_status: str
    can_use_as_instruction: bool
    source_refs: list[dict[str, Any]]
    artifacts: list[dict[str, Any]]
    review_history: list[dict[str, Any]]


class Ob1MemoryAnswer(Model):
    model_config = ConfigDict(title="OB1 memory")

    memory: Ob1MemoryRecord


class Ob1TraceAnswer(Model):
    model_config = ConfigDict(title="OB1 recall trace")

    trace: dict[str, Any]
    items: list[dict[str, Any]]
