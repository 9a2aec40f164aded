"""Documents too big to index within a request: accepted with 202, indexed by a background worker.

201 keeps meaning "searchable now". A document whose text is longer than `IngestDeps.sync_max_chars` is stored
with status `indexing` (its earlier revision, if any, stays searchable) and queued; the worker (embedded: a
thread of `agentkb serve` that resumes pending work after a restart; AWS: the ingest queue) chunks, embeds and
writes it like any other document, then the status is `ready` - or `failed`, with the reason.
"""

from __future__ import annotations

import uuid

from agentkb.config import ConfigurationError
from agentkb.errors import Conflict, DomainError
from agentkb.models.domain import Document, Principal
from agentkb.models.ingest import AddDocumentRequest
from agentkb.services.chunking import content_hash
from agentkb.services.ingest import (
    DocumentInput,
    IngestDeps,
    add_document,
    get_knowledge_base,
    now_iso,
    prepare,
    unchanged,
    write_prepared,
)
from agentkb.services.tag_filters import validate_document_tags


def submit_document(kb_id: str, request: AddDocumentRequest, principal: Principal,
                    deps: IngestDeps) -> tuple[Document, bool]:
    """(document, accepted for background indexing): small documents are indexed before this returns."""
    queue = deps.queue
    if queue is None or len(request.content) <= deps.sync_max_chars:
        return add_document(kb_id, request, principal, deps), False
    kb = get_knowledge_base(deps.catalog, principal, request.workspaceId, kb_id)
    if kb.profile.model != deps.embedder.model_id:
        raise Conflict("This deployment cannot embed for the knowledge base's embedding profile")
    doc = DocumentInput(request.name, request.content, validate_document_tags(kb, request.tags), request.sourceUrl)
    digest = content_hash(doc.content)
    previous = deps.catalog.find_document_by_name(kb.id, doc.name)
    if unchanged(previous, doc, digest):
        return previous, False  # type: ignore[return-value]
    pending = Document(
        id=previous.id if previous else str(uuid.uuid4()), knowledge_base_id=kb.id, workspace_id=kb.workspace_id,
        name=doc.name, source_url=doc.source_url, content_hash=digest, tags=doc.tags,
        chunk_count=previous.chunk_count if previous else 0, token_count=previous.token_count if previous else 0,
        created_at=previous.created_at if previous else now_iso(), revision=previous.revision if previous else 0,
        source_path=None, status="indexing", content=doc.content)
    queue.enqueue(pending)
    return pending, True


def index_pending(deps: IngestDeps, workspace_id: str, kb_id: str, document_id: str) -> Document | None:
    """Index one queued document; None when there is nothing (left) to do. Safe to run twice."""
    queue = deps.queue
    if queue is None:
        raise ConfigurationError("background indexing needs the deployment's indexing queue")
    kb = deps.catalog.get_knowledge_base(workspace_id, kb_id)
    document = deps.catalog.get_document(kb_id, document_id) if kb else None
    if kb is None or document is None or document.status != "indexing":
        return None  # deleted meanwhile, or already indexed (a crash after the write, before the dequeue)
    content = deps.catalog.document_content(kb_id, document_id) or ""
    doc = DocumentInput(document.name, content, document.tags, document.source_url)
    try:
        pieces, vectors = prepare(deps, kb, content)
        written = write_prepared(deps, kb, doc, pieces, vectors)
    except DomainError as exc:
        queue.done(document, exc.message)
        return None
    queue.done(written)
    return written
