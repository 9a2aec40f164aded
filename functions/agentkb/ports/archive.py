"""The archive port (issue 25): what export and import need from a store beyond its everyday ports.

Everything here is engine-neutral: a record read from one engine is written verbatim into the other. The ids a
record carries are kept (a memory keeps its id, a snapshot its bytes), unless an import beside the original gives
them new ones (services/portability/rename.py: the decision and the memory id map are stored here, in the target);
services/portability does the rest through the everyday ports (catalog, index, graph, snapshots, keys).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.domain import Chunk, KnowledgeBase
    from agentkb.models.memory.api import IdempotencyRecord
    from agentkb.models.memory.detail import MemoryDetail
    from agentkb.models.recall.trace import RecallTrace


@dataclass(frozen=True, slots=True)
class ArchivedMemory:
    """One stored memory revision with everything the store keeps: its fields, review state and history (in
    `detail.labels` / `detail.extra`), the hash of the request that wrote it, its vector and its idempotency keys."""

    detail: MemoryDetail
    request_hash: str
    embedding: list[float]
    idempotency: tuple[IdempotencyRecord, ...] = ()


@dataclass(frozen=True, slots=True)
class ArchivedTrace:
    """One recall trace and its usage events: (memory id, used, at) per recalled memory reported on."""

    trace: RecallTrace
    usage: tuple[tuple[int, bool, float], ...] = field(default_factory=tuple)


class WorkspaceArchive(Protocol):
    """Reads every record of a workspace in a stable order, page by page, and writes records back by id."""

    def document_chunks(self, kb: KnowledgeBase, document_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """Each of these documents' chunks as stored (vectors included), by chunk index, in one read where the
        store can (a document without chunks is absent). The caller bounds how many chunks that is (by the
        documents' chunk counts: export.py)."""
        ...

    def memories(self, workspace_id: str, after_id: int, limit: int) -> list[ArchivedMemory]:
        """Every revision (superseded ones too) with an id above `after_id`, by id, at most `limit`."""
        ...

    def put_memories(self, workspace_id: str, memories: Sequence[ArchivedMemory]) -> int:
        """Store these revisions under their own ids (recall sees them at once); a memory already stored in the
        workspace is left as it is. Conflict, with nothing written, when an id is held by another workspace.
        Returns how many were new."""
        ...

    def remap_decision(self, source_workspace_id: str, workspace_id: str, remap: bool) -> bool:
        """Whether the import of the source workspace's archive into `workspace_id` gives its records new ids: what
        an earlier run of that import stored, else `remap`, stored now (so every re-run decides the same)."""
        ...

    def memory_id_map(self, source_workspace_id: str, workspace_id: str,
                      memory_ids: Collection[int]) -> dict[int, int]:
        """The target's id for each of these archive memory ids: the one stored for it by an earlier call, else a
        fresh id from the target's memory id allocator, stored before this returns (a re-run gets the same ids)."""
        ...

    def snapshot_ids(self, workspace_id: str) -> Iterator[str]:
        """The workspace's snapshot ids, read a page at a time (AWS: a paged Scan of the snapshot table)."""
        ...

    def traces(self, workspace_id: str) -> Iterator[ArchivedTrace]:
        """The workspace's recall traces with their usage, read a page at a time (AWS: a paged Scan)."""
        ...

    def put_traces(self, traces: Sequence[ArchivedTrace]) -> int:
        """Store traces (and their usage) that are not stored yet; returns how many were new."""
        ...

    def owned_memories(self, workspace_id: str, owner_id: str) -> list[int]:
        """Ids of every revision of the owner's personal memories in the workspace."""
        ...

    def forget_principal(self, workspace_id: str, principal_id: str) -> dict[str, int]:
        """Remove the principal's recall traces with their usage events and its memory idempotency keys in the
        workspace; counts of each (`traces`, `usage_events`, `idempotency_keys`)."""
        ...
