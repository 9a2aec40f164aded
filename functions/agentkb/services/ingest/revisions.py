"""Writes of one document name are serialised by revision: each write names the revision it replaces.

The store checks that revision where the write commits (embedded: inside the SQLite transaction; DynamoDB: a
conditional write on the name's item before anything is indexed) and refuses a write whose revision moved
(`RevisionConflict`), so two writes can never take the same revision. A write without `expectedRevision` then
replaces the newer revision it was told about; one with `expectedRevision` answers 409 with the current revision.
Embedding happens before all of this and is never redone by a retry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from agentkb.errors import Conflict, RevisionConflict, RevisionMismatch
from agentkb.models.domain import Document
from agentkb.ports.catalog import Catalog

# A write only loses its check when another write of the name committed (or claimed) a revision in between, so
# each retry means another writer got through: this bounds the retries of a name written by many at once.
WRITE_ATTEMPTS = 32

T = TypeVar("T")


@dataclass(frozen=True)
class Replaced:
    """What a write of a name replaces: the store's current revision of the name (0: free), the document holding
    the name, and its stored record when known (its creation time, and the unchanged-write check)."""

    revision: int
    document_id: str | None
    previous: Document | None

    @classmethod
    def stored(cls, previous: Document | None) -> Replaced:
        return cls(previous.revision, previous.id, previous) if previous else cls(0, None, None)


def check_expected(replaced: Replaced, expected: int | None) -> None:
    """409 with the current revision when the request names a revision the document is not at."""
    if expected is not None and replaced.revision != expected:
        raise RevisionMismatch(replaced.revision, expected)


def write_serialised(catalog: Catalog, kb_id: str, name: str, expected: int | None,
                     write: Callable[[Replaced], T]) -> T:
    """Run `write` against the name's current revision until its revision check passes (or `expected` fails)."""
    replaced = Replaced.stored(catalog.find_document_by_name(kb_id, name))
    for _ in range(WRITE_ATTEMPTS):
        check_expected(replaced, expected)
        try:
            return write(replaced)
        except RevisionConflict as moved:
            previous = catalog.find_document_by_name(kb_id, name)
            replaced = Replaced(moved.current_revision, moved.document_id,
                                previous if previous is not None and previous.id == moved.document_id else None)
    raise Conflict("The document is being written concurrently; retry the request",
                   details={"currentRevision": replaced.revision})
