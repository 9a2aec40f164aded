"""The snapshot port (issue 4): built context snapshots kept as exact response bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.snapshot import StoredSnapshot


class SnapshotStore(Protocol):
    """Built context snapshots, kept as the exact response bytes; one per (workspace, run, attempt)."""

    def get(self, snapshot_id: str) -> StoredSnapshot | None: ...

    def put_if_absent(self, snapshot: StoredSnapshot) -> StoredSnapshot:
        """Store the snapshot unless its id exists; returns what is stored (the earlier one on a race)."""
        ...

    def index_version(self, knowledge_base_id: str) -> int | None:
        """The knowledge base's index version: bumped by every document write or delete (None: unknown KB)."""
        ...
