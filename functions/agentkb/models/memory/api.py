"""Agent memory: the `POST /v1/memories` request/response and the store's records."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictStr, field_validator

from agentkb.models.base import Model
from agentkb.models.bounds import MAX_ENTITIES_PER_KIND, MAX_ID, MAX_TIMESTAMP, WorkspaceId
from agentkb.models.memory.detail import MemoryFields
from agentkb.models.numbers import JsonNumber

MemoryType = Literal["user", "feedback", "project", "reference", "decision", "incident", "skill", "document", "note"]
Visibility = Literal["personal", "channel", "project", "workspace", "organization"]

# Broadest last: an answer for audience A may hold memories of visibility A or broader.
VISIBILITY_RANK: dict[str, int] = {"personal": 0, "channel": 1, "project": 2, "workspace": 3, "organization": 4}
# Request entity category -> graph entity kind (one knowledge graph with the graph feature).
ENTITY_KINDS: dict[str, str] = {"people": "person", "orgs": "organization", "repos": "repo", "files": "file",
                                "customers": "customer", "topics": "topic"}
# Sensitivity flags as bits: a memory is eligible only when the request declares each of its bits.
SENSITIVITY_BITS: dict[str, int] = {"contains_code": 1, "contains_customer_data": 2,
                                    "contains_private_meeting_data": 4}

Id = Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID)]
EntityName = Annotated[StrictStr, Field(min_length=1, max_length=MAX_ID)]
EntityList = Annotated[list[EntityName], Field(max_length=MAX_ENTITIES_PER_KIND)]


class _Strict(Model):
    model_config = ConfigDict(extra="forbid", strict=True)


class MemoryEntities(_Strict):
    people: EntityList = []
    orgs: EntityList = []
    repos: EntityList = []
    files: EntityList = []
    customers: EntityList = []
    topics: EntityList = []

    def named(self) -> list[tuple[str, str]]:
        """(graph kind, name) of every entity, first category first, duplicates dropped."""
        out = [(kind, name.strip()) for cat, kind in ENTITY_KINDS.items() for name in getattr(self, cat)]
        return list(dict.fromkeys((k, n) for k, n in out if n))


class MemoryRelation(_Strict):
    from_: EntityName = Field(alias="from")
    to: EntityName
    kind: Annotated[StrictStr, Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")]
    weight: Annotated[JsonNumber, Field(ge=0, le=1)] = 0.5

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class MemorySensitivity(_Strict):
    contains_code: StrictBool = False
    contains_customer_data: StrictBool = False
    contains_private_meeting_data: StrictBool = False

    def bits(self) -> int:
        return sum(bit for name, bit in SENSITIVITY_BITS.items() if getattr(self, name))


class MemoryWriteRequest(_Strict):
    """`POST /v1/memories`: one memory; an existing `name` in the workspace gets a new revision."""

    model_config = ConfigDict(title="Write memory request", extra="forbid", strict=True)

    workspace_id: WorkspaceId = Field(description="Workspace the memory belongs to.")
    project_id: Id | None = Field(None, description="Project it belongs to.")
    visibility: Visibility = Field(description="Who may recall it.")
    owner_id: Id | None = Field(
        None, description="Leave out: a personal memory is the caller's (another principal's id is refused).")
    channel_id: Id | None = Field(None, description="Channel of a channel memory.")
    type: MemoryType = Field(description="What kind of memory it is.")
    name: Annotated[StrictStr, Field(min_length=1, max_length=256)] = Field(description="Stable name of the memory.")
    description: Annotated[StrictStr, Field(max_length=1024)] | None = Field(None, description="One-line summary.")
    body: Annotated[StrictStr, Field(min_length=1, max_length=65536)] = Field(
        description="The memory itself (up to 64 KiB).")
    entities: MemoryEntities | None = Field(None, description="Named entities it is about.")
    relations: Annotated[list[MemoryRelation], Field(max_length=200)] = Field(
        [], description="Weighted relations between entities.")
    confirmed: StrictBool = Field(True, description="Confirmed by a person.")
    stale: StrictBool = Field(False, description="Known to be out of date.")
    valid_until: Annotated[StrictStr, Field(max_length=MAX_TIMESTAMP)] | None = Field(
        None, description="ISO 8601 date after which it expires.")
    occurred_at: Annotated[StrictStr, Field(max_length=MAX_TIMESTAMP)] | None = Field(
        None, description="ISO 8601 date or date-time when what it records happened (created_at is when it was "
                          "written).")
    sensitivity: MemorySensitivity | None = Field(
        None, description="What it contains (code, customer data, private meeting data).")
    source: Annotated[StrictStr, Field(max_length=1024)] | None = Field(None, description="Where it came from.")
    idempotency_key: Annotated[StrictStr, Field(min_length=1, max_length=256)] | None = Field(
        None, description="Same key + same body = stored once.")

    @field_validator("valid_until", "occurred_at")
    @classmethod
    def _timestamp(cls, value: str | None) -> str | None:
        if value is not None:
            parse_timestamp(value)
        return value


def parse_timestamp(value: str) -> float:
    """ISO 8601 (a date, or a date-time; naive means UTC) -> epoch seconds."""
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError("must be an ISO 8601 date or date-time") from exc
    if parsed.tzinfo is None:
        from datetime import UTC

        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


class MemoryWriteResponse(Model):
    """201 (200 for an idempotent replay or an unchanged rewrite)."""

    model_config = ConfigDict(title="Write memory response", extra="forbid")

    memory_id: int
    name: str
    revision: int
    workspace_id: str
    project_id: str | None
    type: str
    visibility: str
    supersedes: int | None = Field(description="memory_id of the revision this one replaced")
    entity_ids: list[str]
    relation_count: int
    created_at: str


class MemoryItem(Model):
    """A stored memory on the /v1 surface (`GET /v1/memories`, `GET /v1/memories/{memoryId}`)."""

    memory_id: int
    name: str
    revision: int
    workspace_id: str
    project_id: str | None
    visibility: str
    owner_id: str | None
    channel_id: str | None
    type: str
    description: str
    body: str
    confirmed: bool
    stale: bool
    superseded: bool
    supersedes: int | None
    valid_until: str | None
    sensitivity: dict[str, bool]
    source: str | None
    entity_ids: list[str]
    relation_count: int
    created_at: str
    updated_at: str | None
    occurred_at: str | None = None  # when what it records happened, if the writer said


class MemoryListResponse(Model):
    model_config = ConfigDict(title="Memory list")

    data: list[MemoryItem]
    nextCursor: str | None  # noqa: N815 - the management lists' name


class MemoryGetResponse(Model):
    model_config = ConfigDict(title="Memory")

    data: MemoryItem


# ---- store records ----------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryRecord(MemoryFields):
    """One memory revision to store (memory_id is assigned by the store)."""

    request_hash: str
    embedding: list[float]


@dataclass(frozen=True, slots=True)
class StoredMemory:
    memory_id: int
    name: str
    revision: int
    request_hash: str
    response: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IdempotencyRecord:
    principal: str
    key: str
    body_hash: str
