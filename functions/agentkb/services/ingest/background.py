"""Documents too big to index within a request: accepted with 202, indexed by a background worker.

201 keeps meaning "searchable now". A document whose text is longer than `IngestDeps.sync_max_chars` is stored
with status `indexing` (its earlier revision, if any, stays searchable) and queued; the worker (embedded: a
thread of `agentkb serve` that resumes pending work after a restart; AWS: the ingest queue) chunks, embeds and
writes it like any other document, then the status is `ready` - or `failed`, with the reason.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

from agentkb.config import ConfigurationError
from agentkb.errors import DomainError, PayloadTooLarge, RevisionConflict
from agentkb.models.domain import Document, Principal
from agentkb.models.ingest import MAX_DOCUMENT_CHARS, AddDocumentRequest, UploadDocumentRequest
from agentkb.services.extract.text import ExtractedText
from agentkb.services.extract.upload import extract_upload
from agentkb.services.ingest.revisions import Replaced, write_serialised
from agentkb.services.ingest.service import (
    DocumentInput,
    IngestDeps,
    add_document,
    admit_document,
    get_knowledge_base,
    now_iso,
    prepare,
    stored_as_is,
    write_queued,
)
from agentkb.services.secrets.documents import refuse_text


def submit_document(kb_id: str, request: AddDocumentRequest, principal: Principal, deps: IngestDeps,
                    page_starts: tuple[int, ...] = ()) -> tuple[Document, bool]:
    """(document, accepted for background indexing): small documents are indexed before this returns.

    A queued document takes its revision now (checked like any write's): the 202 names it, and a later write of
    the name, indexed first or not, is never overwritten when this one is finally indexed. page_starts: an
    extracted PDF's (chunks keep their pages; a queued document's travel with its queue entry)."""
    queue = deps.queue
    if queue is None or len(request.content) <= deps.sync_max_chars:
        return add_document(kb_id, request, principal, deps, page_starts), False
    admitted = admit_document(kb_id, request, principal, deps)
    kb, doc = admitted.kb, admitted.doc
    refuse_text(kb, doc.content)  # a refusing KB stores nothing, not even the queued text

    def attempt(replaced: Replaced) -> tuple[Document, bool]:
        stored = stored_as_is(replaced, doc, admitted.digest)
        if stored is not None:
            return stored, False
        previous = replaced.previous
        pending = Document(
            id=replaced.document_id or str(uuid.uuid4()), knowledge_base_id=kb.id, workspace_id=kb.workspace_id,
            name=doc.name, source_url=doc.source_url, content_hash=admitted.digest, tags=doc.tags,
            chunk_count=previous.chunk_count if previous else 0, token_count=previous.token_count if previous else 0,
            created_at=previous.created_at if previous else now_iso(), revision=replaced.revision + 1,
            source_path=None, status="indexing", content=doc.content)
        queue.enqueue(pending, replaces=replaced.revision, page_starts=page_starts)
        return pending, True

    return write_serialised(deps.catalog, kb.id, doc.name, admitted.expected, attempt)


def submit_upload(kb_id: str, upload: UploadDocumentRequest, principal: Principal,
                  deps: IngestDeps) -> tuple[Document, bool]:
    """A file's text extracted on the server (services/extract/upload.py), then written as submit_document writes
    a document; the knowledge base is found first, so an unreachable one is a 404 before any parsing."""
    get_knowledge_base(deps.catalog, principal, upload.workspaceId, kb_id)
    extracted = extract_upload(upload.name, upload.contentBase64, upload.contentType)
    if len(extracted.text) > MAX_DOCUMENT_CHARS:
        raise PayloadTooLarge(f"The file's text is longer than {MAX_DOCUMENT_CHARS} characters")
    request = AddDocumentRequest(workspaceId=upload.workspaceId, name=upload.name, content=extracted.text,
                                 sourceUrl=upload.sourceUrl, tags=upload.tags,
                                 expectedRevision=upload.expectedRevision)
    return submit_document(kb_id, request, principal, deps, extracted.page_starts)


def index_pending(deps: IngestDeps, workspace_id: str, kb_id: str, document_id: str,
                  page_starts: tuple[int, ...] = (), content_hash: str | None = None) -> Document | None:
    """Index one queued document; None when there is nothing (left) to do. Safe to run twice.

    page_starts: the queue entry's (a PDF upload); they apply to the text they were taken from only, so a later
    revision queued meanwhile (another content hash) is indexed without them."""
    queue = deps.queue
    if queue is None:
        raise ConfigurationError("background indexing needs the deployment's indexing queue")
    kb = deps.catalog.get_knowledge_base(workspace_id, kb_id)
    document = deps.catalog.get_document(kb_id, document_id) if kb else None
    if kb is None or document is None:
        return None  # deleted meanwhile
    if document.status != "indexing":
        queue.done(document)  # already indexed (a crash after the write, before the dequeue), or failed
        return None
    content = deps.catalog.document_content(kb_id, document_id) or ""
    doc = DocumentInput(document.name, content, document.tags, document.source_url)
    try:
        pieces, vectors = prepare(deps, kb, content)
        if page_starts and content_hash in (None, document.content_hash):
            doc = replace(doc, pages=ExtractedText(content, page_starts).chunk_pages([p.content for p in pieces]))
        written = write_queued(deps, kb, document, doc, pieces, vectors)
    except RevisionConflict:
        queue.done(document)  # a later write of the name came meanwhile: it stays, this revision is superseded
        return None
    except DomainError as exc:
        queue.done(document, exc.message)
        return None
    queue.done(written)
    return written
