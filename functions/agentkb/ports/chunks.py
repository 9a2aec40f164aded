"""The chunk reader port: a document's stored chunks, in order, a page at a time (the console's document view).

Embedded: the SQLite chunks table, current as soon as a write commits. AWS: the OpenSearch chunk index, which
shows a write after ~10-60 s (AOSS has no refresh), so a document just written may list none or older chunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.domain import Document, KnowledgeBase


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """One chunk as stored, without its vector; `secret` None: stored before chunks were scanned."""

    chunk_index: int
    content: str
    token_count: int
    pages: tuple[int, ...] = ()
    secret: bool | None = None


class ChunkReader(Protocol):
    def document_chunks_page(self, kb: KnowledgeBase, document: Document, after_index: int,
                             limit: int) -> list[StoredChunk]:
        """The chunks of the document's current revision with an index above `after_index`, by index, at most
        `limit`."""
        ...
