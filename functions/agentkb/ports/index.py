"""The index port (chunk storage and the retrieval legs) and the background indexing queue.

An index may lag writes (OpenSearch Serverless shows writes after ~10-60 s), so read-after-write guarantees live
in the stores, not here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.domain import (
        Chunk,
        Document,
        DocumentHit,
        EmbeddingProfile,
        IndexHit,
        IndexQuery,
        KnowledgeBase,
        LegHit,
    )


class Index(Protocol):
    """Chunk storage and retrieval legs. A document write is atomic: all chunks visible or none."""

    def write_document(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
                       replaces: int | None = None) -> None:
        """Index a document's chunks and commit its record (replacing any earlier revision of the document).

        replaces: the revision of the name this write replaces, checked where the write commits: unless the name
        is at that revision (0: no document has the name) and held by `document.id`, RevisionConflict (with the
        current revision and holder) and nothing is stored. `document.revision` is `replaces + 1`, or `replaces`
        itself for a document accepted with 202 (it took its revision when it was queued). A write never replaces
        a higher revision of the document. None: no check (a caller that is the name's only writer)."""
        ...

    def write_documents(self, kb: KnowledgeBase, items: Sequence[tuple[Document, Sequence[Chunk]]]) -> None:
        """The bulk path (an import): documents of one KB with their chunks, whose vectors are given (nothing is
        embedded), none held by the KB at its revision or a higher one. Each document is whole or absent after a
        crash (embedded: the whole batch is one transaction; AWS: each record commits after its chunks), a document
        the KB holds is replaced as write_document replaces it, so a batch written again after a crash stores
        every document once. A name held by another document: RevisionConflict (embedded: nothing of the batch)."""
        ...

    def delete_document(self, kb: KnowledgeBase, document_id: str) -> None: ...

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Every chunk, vector and index entry of the KB."""
        ...

    def lexical_search(self, query: IndexQuery) -> list[LegHit]:
        """BM25 leg over chunks (their context included): best hits per knowledge base, each KB capped at
        `limit_per_kb`, best first."""
        ...

    def document_search(self, query: IndexQuery) -> list[DocumentHit]:
        """BM25 leg over whole documents (title, headings and text): best documents per KB, best first."""
        ...

    def vector_search(self, query: IndexQuery) -> list[LegHit]:
        """Filtered exact/approximate kNN leg by cosine; `score` is the cosine similarity."""
        ...

    def filter_search(self, query: IndexQuery) -> list[LegHit]:
        """Tag-only leg: matching chunks in a deterministic order (document name, chunk index)."""
        ...

    def hydrate(self, workspace_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexHit]:
        """Content, document fields and metadata of the chunks a search returns (missing ids are left out)."""
        ...

    def similarities(self, chunk_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Cosine similarity of stored chunks to a vector (fills `similarity` for lexical-only hits)."""
        ...


class IndexingQueue(Protocol):
    """Documents accepted now and indexed in the background (202): the record shows `indexing` until then."""

    def enqueue(self, document: Document, replaces: int | None = None, page_starts: tuple[int, ...] = ()) -> None:
        """Store the record (status `indexing`, text included; earlier chunks stay searchable) and queue it.

        replaces: checked like Index.write_document's (the record takes `document.revision` = `replaces + 1`).
        page_starts: an extracted PDF's page offsets in the text, kept with the queue entry (not the record) for
        the indexer, so the chunks keep their pages."""
        ...

    def done(self, document: Document, error: str | None = None) -> None:
        """Indexing of `document.revision` ended: dequeue it (unless a later revision waits); with an error that
        revision's record becomes `failed` with the reason."""
        ...


class ShadowGenerations(Protocol):
    """A knowledge base re-embedded under another profile (`agentkb kb reindex --embedding-model`): its chunks under
    the target profile are written beside the live ones, unseen by searches, then made live in one catalog write.

    Embedded: a pending-switch row and shadow vectors in SQLite. AWS: the pending target on the KB's DynamoDB item
    and the chunks in the target profile's OpenSearch index."""

    settle_s: float  # how long a search that read the KB before the switch may still read the old generation

    def pending(self, kb: KnowledgeBase) -> EmbeddingProfile | None:
        """The target of the switch in progress, or None."""
        ...

    def begin(self, kb: KnowledgeBase, target: EmbeddingProfile) -> None:
        """Record the pending switch (again, for a re-run); Conflict when a switch to another target is pending."""
        ...

    def staged(self, kb: KnowledgeBase, target: EmbeddingProfile) -> dict[str, int]:
        """Document id -> revision already written in the shadow generation (what a re-run may skip)."""
        ...

    def stage(self, kb: KnowledgeBase, target: EmbeddingProfile, document: Document,
              chunks: Sequence[Chunk]) -> None:
        """Write the document's chunks, embedded under `target`, into the shadow generation (replacing any earlier
        shadow of it)."""
        ...

    def unstage(self, kb: KnowledgeBase, target: EmbeddingProfile, document_id: str) -> None:
        """Forget the shadow of a document deleted meanwhile."""
        ...

    def switch(self, kb: KnowledgeBase, target: EmbeddingProfile) -> list[str]:
        """Make the shadow generation live: the KB's profile and its vectors change together. Returns the ids of
        documents whose live revision the shadow lacks (nothing changed then: stage them and switch again); an
        engine that cannot check that in the same step returns [] and the caller catches up after it."""
        ...

    def abandon(self, kb: KnowledgeBase, target: EmbeddingProfile) -> None:
        """Give up a pending switch: its shadow generation and the pending record go (a KB deleted meanwhile)."""
        ...

    def drop(self, kb: KnowledgeBase, old: EmbeddingProfile) -> None:
        """After the switch: remove what is left of the KB under its old profile."""
        ...

    def leftover(self, kb: KnowledgeBase) -> EmbeddingProfile | None:
        """The old profile of a switch whose drop did not finish (a kill between the two), or None."""
        ...
