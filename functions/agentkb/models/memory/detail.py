"""What the memory store returns and accepts beyond recall: one stored memory, a listing page, an in-place change."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SHARED_NAME = "N#"  # the workspace namespace: also the DynamoDB claim key of every name written before issue 18
PERSONAL_NAME = "O#"  # an owner's namespace (not "P#": the DynamoDB memory table's index markers use that prefix)


def name_key(visibility: str, owner_id: str | None, name: str) -> str:
    """The namespace key of a memory name: a write supersedes only the live memory of the same key.

    A personal memory's name lives in its owner's namespace, every shared visibility in the workspace's one. The
    owner is length-prefixed, so no (owner, name) pair and no shared name can ever encode to the same key."""
    if visibility == "personal":
        owner = owner_id or ""
        return f"{PERSONAL_NAME}{len(owner)}:{owner}#{name}"
    return SHARED_NAME + name


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryFields:
    """The fields of a memory revision both as written (models.memory.MemoryRecord) and as read (MemoryDetail)."""

    workspace_id: str
    project_id: str | None
    visibility: str
    owner_id: str | None
    channel_id: str | None
    type: str
    name: str
    description: str
    body: str
    confirmed: bool
    stale: bool
    valid_until: float | None
    sensitivity: int
    source: str | None
    created_at: str
    updated_at: float
    entity_ids: tuple[str, ...] = ()
    relation_count: int = 0
    occurred_at: str | None = None  # when what it records happened (RFC 3339 UTC), if the writer said
    labels: Mapping[str, str] = field(default_factory=dict)  # flat strings a listing can filter on (OB1 statuses)
    extra: Mapping[str, Any] = field(default_factory=dict)  # any JSON kept with the memory (OB1 provenance, history)

    @property
    def name_key(self) -> str:
        return name_key(self.visibility, self.owner_id, self.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryDetail(MemoryFields):
    """One stored memory revision, every field: what was written plus what the store assigned."""

    memory_id: int
    revision: int
    superseded: bool
    supersedes: int | None


@dataclass(frozen=True, slots=True)
class MemoryListQuery:
    """A page of a workspace's memories, newest (highest id) first. Every filter is exact but `label_prefix`."""

    workspace_id: str
    project_id: str | None = None
    type: str | None = None
    name_prefix: str | None = None
    status: str | None = None  # live | superseded | stale | unconfirmed
    labels: Mapping[str, str] = field(default_factory=dict)
    label_prefix: tuple[str, str] | None = None  # (label, prefix)
    limit: int = 50
    before_id: int | None = None  # the cursor: only memories with a smaller id
    viewer: str | None = None  # a principal id: another principal's personal memories are not listed


def viewable(memory: MemoryDetail, viewer: str | None) -> bool:
    """The owner rule: a personal memory is its owner's alone (no viewer: an internal read, every memory)."""
    return viewer is None or memory.visibility != "personal" or memory.owner_id == viewer


@dataclass(frozen=True, slots=True)
class MemoryPage:
    items: list[MemoryDetail]
    next_before_id: int | None


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """An in-place change of one memory (review actions): None leaves a field as it is.

    A change of `body` must come with its new `embedding`. Labels and extra replace the stored ones whole.
    """

    confirmed: bool | None = None
    stale: bool | None = None
    visibility: str | None = None
    owner_id: str | None = None
    description: str | None = None
    body: str | None = None
    embedding: list[float] | None = None
    labels: Mapping[str, str] | None = None
    extra: Mapping[str, Any] | None = None
    updated_at: float | None = None
