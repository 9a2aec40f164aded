"""Documents too big to index within a request: accepted with 202, indexed by a background worker.

201 keeps meaning "searchable now". A document whose text is longer than `IngestDeps.sync_max_chars` is stored
with status `indexing` (its earlier revision, if any, stays searchable) and queued; the worker (embedded: a
thread of `agentkb serve` that resumes pending work after a restart; AWS: the ingest queue) chunks, embeds and
writes it like any other document, then the status is `ready` - or `failed`, with the reason.
"""

from __future__ import annotations

import uuid

from agentkb.config import ConfigurationError
from agentkb.errors import DomainError
from agentkb.models.domain import Document, Principal
from agentkb.models.ingest import AddDocumentRequest
from agentkb.services.document_secrets import refuse_text
from agentkb.services.ingest import (
    DocumentInput,
    IngestDeps,
    add_document,
    admit_document,
    now_iso,
    prepare,
    write_prepared,
)


def submit_document(kb_id: str, request: AddDocumentRequest, principal: Principal,
                    deps: IngestDeps) -> tuple[Document, bool]:
    """(document, accepted for background indexing): small documents are indexed before this returns."""
    queue = deps.queue
    if queue is None or len(request.content) <= deps.sync_max_chars:
        return add_document(kb_id, request, principal, deps), False
    admitted = admit_document(kb_id, request, principal, deps)
    stored = admitted.same_as_stored()
    if stored is not None:
        return stored, False
    kb, doc, previous = admitted.kb, admitted.doc, admitted.previous
    refuse_text(kb, doc.content)  # a refusing KB stores nothing, not even the queued text
    pending = Document(
        id=previous.id if previous else str(uuid.uuid4()), knowledge_base_id=kb.id, workspace_id=kb.workspace_id,
        name=doc.name, source_url=doc.source_url, content_hash=admitted.digest, tags=doc.tags,
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
