"""Agent memory ports (issue 3: recall): memory revisions and OB1's recall traces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.memory.api import IdempotencyRecord, MemoryRecord, StoredMemory
    from agentkb.models.memory.detail import MemoryChange, MemoryDetail, MemoryListQuery, MemoryPage
    from agentkb.models.recall.api import MemoryView, RecallScope
    from agentkb.models.recall.trace import RecallTrace, UsageEvent


class MemoryStore(Protocol):
    """Memory revisions per workspace. Every recall read applies the RecallScope inside its query, before ranking."""

    def find_live(self, workspace_id: str, key: str) -> StoredMemory | None:
        """The current (not superseded) revision of a memory name in a namespace (`name_key`, models.memory_detail).

        Every name lookup (supersede, forget, batches) goes by that key: a personal name is its owner's alone."""
        ...

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        """(body hash, memory) of an idempotency key already used by this principal in this workspace."""
        ...

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        """Store a new revision atomically (the live revision of the same name becomes superseded)."""
        ...

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Bulk load of memories with new names in one transaction."""
        ...

    def vector_dimension(self, workspace_id: str) -> int | None: ...

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
        """Exact cosine top-k over eligible memories, `boosts` added for ranking only: (id, cosine).

        A boost never makes a memory eligible: only eligible memories are ranked at all."""
        ...

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        ...

    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        """BM25 top-k over eligible memories: (id, relevance > 0), best first."""
        ...

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]: ...

    def linked_memories(self, scope: RecallScope, entity_ids: Sequence[str],
                        per_entity_cap: int) -> list[tuple[int, str]]:
        """Eligible memories linked to the entities: (memory_id, entity_id), capped per entity."""
        ...

    def views(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryView]: ...

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        """New names of one workspace, all or nothing for every reader; a taken name fails it with Conflict."""
        ...

    def get(self, workspace_id: str, memory_id: int, viewer: str | None = None) -> MemoryDetail | None:
        """One memory; with a `viewer`, another principal's personal memory is None (the owner rule)."""
        ...

    def get_many(self, workspace_id: str, memory_ids: Sequence[int],
                 viewer: str | None = None) -> dict[int, MemoryDetail]:
        """The existing ones of these memories (batched, read-after-write consistent), under the owner rule."""
        ...

    def list_memories(self, query: MemoryListQuery) -> MemoryPage:
        """Newest first, filtered, paged by `before_id`."""
        ...

    def update(self, workspace_id: str, memory_id: int, change: MemoryChange) -> MemoryDetail | None:
        """Change one memory in place (atomic); recall sees the change at once. None when it does not exist."""
        ...

    def delete(self, workspace_id: str, memory_id: int) -> list[int]:
        """Forget every revision of the memory's name in its namespace (its own chain only): store, vectors,
        indexes, entity links. The ids deleted."""
        ...


class RecallTraceStore(Protocol):
    """OB1 recall traces and the usage reported on them (the input of usage feedback in ranking)."""

    def put(self, trace: RecallTrace) -> None: ...

    def get(self, request_id: str) -> RecallTrace | None: ...

    def record_usage(self, request_id: str, used: Sequence[int], ignored: Mapping[int, str | None],
                     at: float) -> RecallTrace | None:
        """Mark the trace's items used / ignored and keep one usage event per (recall, memory); None: no trace."""
        ...

    def usage_events(self, workspace_id: str, since: float, limit: int) -> list[UsageEvent]:
        """The workspace's usage events at or after `since`, newest first, at most `limit`."""
        ...
