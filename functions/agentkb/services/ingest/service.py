"""The write path for knowledge: knowledge bases, tag definitions, documents (chunk -> embed -> index)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from agentkb.errors import BadRequest, Conflict, NotFound
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase, Principal, TagValue
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.ports.catalog import Catalog
from agentkb.ports.embedding import Embedder, EmbedderRegistry, EmbeddingCache, Tokenizer
from agentkb.ports.index import Index, IndexingQueue
from agentkb.services.extract.text import ExtractedText
from agentkb.services.ingest.chunking import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_OVERLAP_TOKENS,
    TextChunk,
    chunk_markdown,
    content_hash,
)
from agentkb.services.ingest.revisions import Replaced, check_expected, write_serialised
from agentkb.services.search.profiles import embedder_for, matches
from agentkb.services.search.tag_filters import assign_slots, validate_document_tags
from agentkb.services.secrets.documents import enforce_policy, secret_chunk_indexes

SYNC_INDEX_MAX_CHARS = 32_000


@dataclass(frozen=True)
class IngestDeps:
    catalog: Catalog
    index: Index
    embedder: Embedder
    tokenizer: Tokenizer
    cache: EmbeddingCache | None = None
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS
    # Longer documents are indexed in the background (202): ~80 chunks, about half a second of embedding on an idle
    # 2-core machine; writes behind it in the local gateway wait at most that long.
    sync_max_chars: int = SYNC_INDEX_MAX_CHARS
    queue: IndexingQueue | None = None  # None: every document is indexed within its request
    embedders: EmbedderRegistry | None = None  # for KBs on another profile than the configured one (issue 25)


def now_iso() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def create_knowledge_base(request: CreateKnowledgeBaseRequest, principal: Principal, deps: IngestDeps) -> KnowledgeBase:
    if not principal.can_reach(request.workspaceId):
        raise NotFound("Workspace not found")
    model = request.embeddingModel or deps.embedder.model_id
    if model != deps.embedder.model_id:
        raise BadRequest("Unsupported embedding model", details=[
            {"path": "embeddingModel", "message": f"this deployment embeds with {deps.embedder.model_id}"}])
    if deps.catalog.find_knowledge_base_by_name(request.workspaceId, request.name):
        raise Conflict("A knowledge base with this name already exists in the workspace")
    tags = assign_slots([(t.tagName, t.fieldType) for t in request.tagDefinitions or []])
    kb = KnowledgeBase(id=str(uuid.uuid4()), workspace_id=request.workspaceId, name=request.name,
                       description=request.description,
                       profile=EmbeddingProfile(model, deps.embedder.dimension), tag_definitions=tags,
                       created_at=now_iso(), secret_policy=request.secretPolicy)
    deps.catalog.create_knowledge_base(kb)
    return kb


def get_knowledge_base(catalog: Catalog, principal: Principal, workspace_id: str, kb_id: str) -> KnowledgeBase:
    kb = catalog.get_knowledge_base(workspace_id, kb_id) if principal.can_reach(workspace_id) else None
    if kb is None:
        raise NotFound("Knowledge base not found")
    return kb


def embed_chunks(deps: IngestDeps, profile: EmbeddingProfile, texts: list[tuple[str, str]]) -> dict[str, list[float]]:
    """Vectors for (content_hash, text) pairs, reusing cached vectors of identical content."""
    wanted = dict(texts)
    vectors = deps.cache.get_many(profile.key, list(wanted)) if deps.cache else {}
    missing = [h for h in wanted if h not in vectors]
    if missing:
        embedder = embedder_for(deps.embedder, deps.embedders, profile)
        fresh = dict(zip(missing, embedder.embed_documents([wanted[h] for h in missing]), strict=True))
        if deps.cache:
            deps.cache.put_many(profile.key, fresh)
        vectors.update(fresh)
    return vectors


def prefetch_embeddings(deps: IngestDeps, kb: KnowledgeBase, contents: list[str]) -> int:
    """Embed the chunks of many documents in one batched call, into the embedding cache; returns new vectors.

    Bulk ingest calls this per group of documents before adding them one by one: each add_document then finds
    its vectors in the cache, so the model sees full batches instead of a document's two or three chunks.
    """
    if deps.cache is None:
        return 0
    pairs = {content_hash(p.embedding_text): p.embedding_text for text in contents
             for p in chunk_markdown(text, deps.tokenizer, deps.chunk_tokens, deps.overlap_tokens)}
    missing = set(pairs) - set(deps.cache.get_many(kb.profile.key, list(pairs)))
    if missing:
        embed_chunks(deps, kb.profile, [(h, pairs[h]) for h in sorted(missing)])
    return len(missing)


@dataclass(frozen=True)
class DocumentInput:
    """A document to write, validated: what the HTTP route and bulk ingest both hand to `write_prepared`."""

    name: str
    content: str
    tags: dict[str, TagValue]
    source_url: str | None = None
    source_path: str | None = None
    pages: tuple[tuple[int, ...], ...] = ()  # per chunk (PDF), aligned with the pieces; empty otherwise


def unchanged(previous: Document | None, doc: DocumentInput, digest: str) -> bool:
    """Same text, tags, URL and source: nothing to re-index (idempotent re-ingest). A document stored before
    chunks were scanned for secrets is re-indexed once, which scans it."""
    return previous is not None and previous.status == "ready" and previous.secret_chunks is not None and (
        previous.content_hash, previous.tags, previous.source_url, previous.source_path) == (
        digest, doc.tags, doc.source_url, doc.source_path)


def stored_as_is(replaced: Replaced, doc: DocumentInput, digest: str) -> Document | None:
    """The current record when a write changes nothing: the write then answers it (no new revision)."""
    previous = replaced.previous
    fresh = previous is not None and previous.revision == replaced.revision  # not behind a write in flight
    return previous if fresh and unchanged(previous, doc, digest) else None


@dataclass(frozen=True)
class AdmittedDocument:
    """A document request checked against its knowledge base (reach, embedding profile, tags)."""

    kb: KnowledgeBase
    doc: DocumentInput
    digest: str
    previous: Document | None  # the stored document of the same name
    expected: int | None = None  # the revision the request replaces (`expectedRevision`), if it names one

    def same_as_stored(self) -> Document | None:
        """The stored document when the request changes nothing (then there is nothing to index)."""
        return self.previous if unchanged(self.previous, self.doc, self.digest) else None


def admit_document(kb_id: str, request: AddDocumentRequest, principal: Principal,
                   deps: IngestDeps) -> AdmittedDocument:
    """The checks every document write makes first, indexed now (201) or in the background (202)."""
    kb = get_knowledge_base(deps.catalog, principal, request.workspaceId, kb_id)
    if not matches(deps.embedder, kb.profile) and not (deps.embedders and deps.embedders.embedder_for(
            kb.profile.model, kb.profile.dimension)):
        raise Conflict("This deployment cannot embed for the knowledge base's embedding profile")
    doc = DocumentInput(request.name, request.content, validate_document_tags(kb, request.tags), request.sourceUrl)
    previous = deps.catalog.find_document_by_name(kb.id, doc.name)
    check_expected(Replaced.stored(previous), request.expectedRevision)  # before any embedding: 409 costs nothing
    return AdmittedDocument(kb, doc, content_hash(doc.content), previous, request.expectedRevision)


def add_document(kb_id: str, request: AddDocumentRequest, principal: Principal, deps: IngestDeps,
                 page_starts: tuple[int, ...] = ()) -> Document:
    """Chunk, embed and index one document atomically; a document with the same name is replaced.

    page_starts: where each page of an extracted PDF begins in the content (an upload): chunks keep their pages."""
    admitted = admit_document(kb_id, request, principal, deps)
    stored = admitted.same_as_stored()
    if stored is not None:
        return stored
    # Embedding runs before, and outside, the write: only the final index write serializes with other writers.
    pieces, vectors = prepare(deps, admitted.kb, admitted.doc.content)
    doc = admitted.doc
    if page_starts:
        doc = replace(doc, pages=ExtractedText(doc.content, page_starts).chunk_pages([p.content for p in pieces]))
    return write_prepared(deps, admitted.kb, doc, pieces, vectors, admitted.expected)


def write_prepared(deps: IngestDeps, kb: KnowledgeBase, doc: DocumentInput, pieces: list[TextChunk],
                   vectors: dict[str, list[float]], expected: int | None = None) -> Document:
    """Write a chunked, embedded document atomically as the next revision of its name (document_revisions.py).

    expected: the revision the write must replace (0: the name must be free); None replaces whatever is current."""
    digest = content_hash(doc.content)
    flagged = secret_chunk_indexes(pieces)
    enforce_policy(kb, pieces, flagged)

    def attempt(replaced: Replaced) -> Document:
        stored = stored_as_is(replaced, doc, digest)
        if stored is not None:
            return stored
        document = replace(new_revision(kb, doc, replaced, digest, pieces), secret_chunks=flagged)
        deps.index.write_document(kb, document, _chunks(document, pieces, vectors, doc.pages),
                                  replaces=replaced.revision)
        return document

    return write_serialised(deps.catalog, kb.id, doc.name, expected, attempt)


def prepare(deps: IngestDeps, kb: KnowledgeBase, content: str) -> tuple[list[TextChunk], dict[str, list[float]]]:
    pieces = chunk_markdown(content, deps.tokenizer, deps.chunk_tokens, deps.overlap_tokens)
    if not pieces:
        raise BadRequest("The document has no text", details=[{"path": "content", "message": "no tokens"}])
    if kb.secret_policy == "refuse":  # refused before any embedding (write_prepared scans every document)
        enforce_policy(kb, pieces, secret_chunk_indexes(pieces))
    # Vectors are keyed by what was embedded (context + content): a chunk under a renamed heading is re-embedded.
    return pieces, embed_chunks(deps, kb.profile, [(content_hash(p.embedding_text), p.embedding_text)
                                                   for p in pieces])


def new_revision(kb: KnowledgeBase, doc: DocumentInput, replaced: Replaced, digest: str,
                 pieces: list[TextChunk]) -> Document:
    """The record of the revision after `replaced` (the first of a new document when the name is free)."""
    previous = replaced.previous
    return Document(
        id=replaced.document_id or str(uuid.uuid4()), knowledge_base_id=kb.id, workspace_id=kb.workspace_id,
        name=doc.name, source_url=doc.source_url, content_hash=digest, tags=doc.tags, chunk_count=len(pieces),
        token_count=sum(p.token_count for p in pieces), created_at=previous.created_at if previous else now_iso(),
        revision=replaced.revision + 1, source_path=doc.source_path, content=doc.content)


def write_queued(deps: IngestDeps, kb: KnowledgeBase, queued: Document, doc: DocumentInput, pieces: list[TextChunk],
                 vectors: dict[str, list[float]]) -> Document:
    """Index a document accepted with 202 at the revision it took then; RevisionConflict when a later write of
    the name came meanwhile (that one stays: nothing of this one is stored)."""
    document = replace(new_revision(kb, doc, Replaced(queued.revision, queued.id, queued), queued.content_hash,
                                    pieces), revision=queued.revision, secret_chunks=secret_chunk_indexes(pieces))
    deps.index.write_document(kb, document, _chunks(document, pieces, vectors, doc.pages), replaces=queued.revision)
    return document


def _chunks(document: Document, pieces: list[TextChunk], vectors: dict[str, list[float]],
            pages: tuple[tuple[int, ...], ...] = ()) -> list[Chunk]:
    return [Chunk(id=f"{document.id}:{document.revision}:{p.index}", document_id=document.id, chunk_index=p.index,
                  content=p.content, token_count=p.token_count, content_hash=p.content_hash,
                  embedding=vectors[content_hash(p.embedding_text)], context=p.context,
                  pages=pages[p.index] if p.index < len(pages) else (),
                  secret=p.index in (document.secret_chunks or ())) for p in pieces]


def delete_document(kb_id: str, document_id: str, workspace_id: str, principal: Principal, deps: IngestDeps) -> None:
    kb = get_knowledge_base(deps.catalog, principal, workspace_id, kb_id)
    if deps.catalog.get_document(kb.id, document_id) is None:
        raise NotFound("Document not found")
    deps.index.delete_document(kb, document_id)
