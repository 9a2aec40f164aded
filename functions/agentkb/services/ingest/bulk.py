"""Bulk ingest: many documents into one knowledge base, with identity, conflicts, pruning and honest progress.

Identity: one file, one document (file_identity.py): a file the KB holds is updated or left alone under its
name; writing over another file's document is a conflict unless `replace`. Embedding runs in full model
batches across documents, outside any lock or transaction; each document is then written in its own
transaction as soon as its vectors exist, so a kill at any point leaves whole documents only, and a re-run
(unchanged ones skipped by content hash, vectors already made found in the embedding cache) finishes the job.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentkb.errors import DomainError
from agentkb.models.domain import Document, KnowledgeBase
from agentkb.services.extract.files import ExtractedText
from agentkb.services.ingest.chunking import TextChunk, chunk_markdown, content_hash
from agentkb.services.ingest.file_identity import FileIdentities, Target, find_identities, resolve_target
from agentkb.services.ingest.service import DocumentInput, IngestDeps, unchanged, write_prepared
from agentkb.services.search.profiles import embedder_for
from agentkb.services.search.tag_filters import validate_document_tags

EMBED_BATCH = 64  # chunks per embedder call: full model batches, and a progress step every ~1-2 s on 2 cores


class Progress(Protocol):
    def start(self, total_chunks: int) -> None: ...

    def advance(self, chunks: int) -> None: ...

    def close(self) -> None: ...


class NoProgress:
    def start(self, total_chunks: int) -> None:
        return None

    def advance(self, chunks: int) -> None:
        return None

    def close(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class SourceDocument:
    name: str
    source_path: str
    extracted: ExtractedText
    tags: dict[str, Any]


@dataclass
class IngestSummary:
    """What happened, counted as it happened (never what was attempted)."""

    knowledge_base_id: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0
    conflicts: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    documents: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)

    def record(self, document: Document, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)
        if outcome != "unchanged":
            self.chunks += document.chunk_count
        self.documents.append({"id": document.id, "name": document.name,
                               "path": document.source_path or "", "outcome": outcome})

    def as_json(self) -> dict[str, Any]:
        return {"knowledgeBaseId": self.knowledge_base_id, "created": self.created, "updated": self.updated,
                "unchanged": self.unchanged, "removed": self.removed, "conflicts": self.conflicts,
                "skipped": self.skipped, "failed": self.failed, "chunks": self.chunks, "warnings": self.warnings,
                "documents": self.documents}


@dataclass
class _Work:
    source: SourceDocument
    doc: DocumentInput
    pieces: list[TextChunk]


def _plan(deps: IngestDeps, kb: KnowledgeBase, source: SourceDocument, replace: bool,
          summary: IngestSummary, known: FileIdentities) -> _Work | None:
    """Decide one document: conflict, unchanged, or work to embed and write."""
    text = source.extracted.text
    try:
        tags = validate_document_tags(kb, source.tags or None)
    except DomainError as exc:
        summary.failed.append({"path": source.source_path, "name": source.name, "error": _reason(exc)})
        return None
    target = resolve_target(deps.catalog, kb.id, source.source_path, source.name, replace, known)
    if not isinstance(target, Target):
        summary.conflicts.append(target)
        return None
    name = target.name
    doc = DocumentInput(name, text, tags, source_path=source.source_path)
    if unchanged(target.previous, doc, content_hash(text)):
        summary.record(target.previous, "unchanged")  # type: ignore[arg-type]
        return None
    pieces = chunk_markdown(text, deps.tokenizer, deps.chunk_tokens, deps.overlap_tokens)  # as prepare() chunks it
    if not pieces:
        summary.skipped.append({"path": source.source_path, "reason": "no text"})
        return None
    pages = source.extracted.chunk_pages([p.content for p in pieces])
    return _Work(source, DocumentInput(name, text, tags, source_path=source.source_path, pages=pages), pieces)


def _reason(exc: DomainError) -> str:
    detail = exc.details[0] if isinstance(exc.details, list) and exc.details else None
    return f"{exc.message} ({detail.get('path')}: {detail.get('message')})" if isinstance(detail, dict) else exc.message


class _Pipeline:
    """Embeds the chunks of queued documents in full batches; writes each document once all its vectors exist."""

    def __init__(self, deps: IngestDeps, kb: KnowledgeBase, progress: Progress, summary: IngestSummary) -> None:
        self.deps, self.kb, self.progress, self.summary = deps, kb, progress, summary
        self.pending: list[_Work] = []
        self.vectors: dict[str, list[float]] = {}
        self.todo: dict[str, str] = {}  # content hash -> text, waiting for the embedder
        self.waiting: Counter[str] = Counter()  # chunks waiting per hash (progress advances by chunks)
        self.needed: Counter[str] = Counter()  # pending documents per hash (vectors are freed after writing)

    def add(self, work: _Work) -> None:
        hashes = [vector_key(p) for p in work.pieces]
        unknown = [h for h in dict.fromkeys(hashes) if h not in self.vectors and h not in self.todo]
        if unknown and self.deps.cache is not None:
            self.vectors.update(self.deps.cache.get_many(self.kb.profile.key, unknown))
        for piece in work.pieces:
            key = vector_key(piece)
            if key in self.vectors:
                self.progress.advance(1)
            else:
                self.todo.setdefault(key, piece.embedding_text)
                self.waiting[key] += 1
        self.needed.update(set(hashes))
        self.pending.append(work)
        while len(self.todo) >= EMBED_BATCH:
            self._embed(EMBED_BATCH)
        self._write_ready()

    def finish(self) -> None:
        while self.todo:
            self._embed(EMBED_BATCH)
        self._write_ready()

    def _embed(self, count: int) -> None:
        batch = list(self.todo.items())[:count]
        embedder = embedder_for(self.deps.embedder, self.deps.embedders, self.kb.profile)  # the KB's own profile
        fresh = dict(zip([h for h, _ in batch], embedder.embed_documents([t for _, t in batch]), strict=True))
        if self.deps.cache is not None:  # a re-run after a kill finds these instead of embedding them again
            self.deps.cache.put_many(self.kb.profile.key, fresh)
        self.vectors.update(fresh)
        for h in fresh:
            del self.todo[h]
            self.progress.advance(self.waiting.pop(h, 0))
        self._write_ready()

    def _write_ready(self) -> None:
        still: list[_Work] = []
        for work in self.pending:
            if any(vector_key(p) not in self.vectors for p in work.pieces):
                still.append(work)
                continue
            self._write(work)
            hashes = {vector_key(p) for p in work.pieces}
            self.needed.subtract(hashes)
            for h in hashes:
                if self.needed[h] <= 0:
                    self.vectors.pop(h, None)
                    del self.needed[h]
        self.pending = still

    def _write(self, work: _Work) -> None:
        try:
            document = write_prepared(self.deps, self.kb, work.doc, work.pieces, self.vectors)
        except DomainError as exc:
            self.summary.failed.append({"path": work.source.source_path, "name": work.source.name,
                                        "error": _reason(exc)})
            return
        self.summary.record(document, "created" if document.revision == 1 else "updated")


def ingest_documents(deps: IngestDeps, kb: KnowledgeBase, sources: Sequence[SourceDocument], *, replace: bool,
                     summary: IngestSummary, progress: Progress | None = None) -> IngestSummary:
    """Plan every document, then embed and write the changed ones; the summary counts what happened."""
    progress = progress or NoProgress()
    known = find_identities(deps.catalog, kb.id, {s.source_path: s.name for s in sources})
    summary.warnings.extend(known.warnings)
    work = [w for w in (_plan(deps, kb, s, replace, summary, known) for s in sources) if w is not None]
    progress.start(sum(len(w.pieces) for w in work))
    pipeline = _Pipeline(deps, kb, progress, summary)
    try:
        for item in work:
            pipeline.add(item)
        pipeline.finish()
    finally:
        progress.close()
    return summary


def prune(deps: IngestDeps, kb: KnowledgeBase, roots: Sequence[str], present: set[str],
          summary: IngestSummary) -> None:
    """Delete the KB's documents read from under `roots` whose source file is not among `present`."""
    prefixes = tuple(r.rstrip("/") + "/" for r in roots)
    gone: list[Document] = []
    cursor: str | None = None
    while True:
        page, cursor = deps.catalog.list_documents(kb.id, 200, cursor)
        gone.extend(d for d in page if d.source_path and d.source_path.startswith(prefixes)
                    and d.source_path not in present)
        if cursor is None:
            break
    for document in gone:
        deps.index.delete_document(kb, document.id)
        summary.removed += 1
        summary.documents.append({"id": document.id, "name": document.name, "path": document.source_path or "",
                                  "outcome": "removed"})


def vector_key(piece: TextChunk) -> str:
    """Vectors are keyed by what was embedded (context + content), as in `ingest.prepare`."""
    return content_hash(piece.embedding_text)
