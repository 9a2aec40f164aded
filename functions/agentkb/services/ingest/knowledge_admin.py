"""Management of knowledge: list, inspect and delete knowledge bases and documents (routes and CLI share it)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from agentkb.errors import NotFound
from agentkb.models.domain import Document, KnowledgeBase, Principal
from agentkb.paging import decode_cursor, encode_cursor, is_string_pair
from agentkb.ports.catalog import Catalog
from agentkb.ports.chunks import ChunkReader, StoredChunk
from agentkb.ports.index import Index, ShadowGenerations
from agentkb.services.ingest.service import get_knowledge_base
from agentkb.services.secrets.detector import find_secrets

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def list_knowledge_bases(catalog: Catalog, principal: Principal, workspace_id: str, limit: int,
                         cursor: str | None) -> Page[KnowledgeBase]:
    """The workspace's knowledge bases by name; a workspace the caller cannot reach is a 404, like a missing one."""
    if not principal.can_reach(workspace_id):
        raise NotFound("Workspace not found")
    after = tuple(decode_cursor(cursor, is_string_pair)) if cursor else ("", "")
    # A workspace holds few knowledge bases: the catalog lists them whole and the page is cut here.
    rest = [kb for kb in catalog.list_knowledge_bases(workspace_id) if (kb.name, kb.id) > after]
    page = rest[:limit]
    return Page(page, encode_cursor([page[-1].name, page[-1].id]) if len(rest) > limit else None)


def delete_knowledge_base(catalog: Catalog, index: Index, principal: Principal, workspace_id: str,
                          kb_id: str, generations: ShadowGenerations | None = None) -> None:
    """Chunks, vectors and index entries first (a pending reindex's shadow too), then documents and the KB: a retry
    after a crash finishes it."""
    kb = get_knowledge_base(catalog, principal, workspace_id, kb_id)
    if generations is not None and (pending := generations.pending(kb)) is not None:
        generations.abandon(kb, pending)
    index.delete_knowledge_base(kb)
    catalog.delete_knowledge_base(kb)


def list_documents(catalog: Catalog, principal: Principal, workspace_id: str, kb_id: str, limit: int,
                   cursor: str | None) -> Page[Document]:
    kb = get_knowledge_base(catalog, principal, workspace_id, kb_id)
    documents, next_cursor = catalog.list_documents(kb.id, limit, cursor)
    return Page(documents, next_cursor)


def get_document(catalog: Catalog, principal: Principal, workspace_id: str, kb_id: str,
                 document_id: str) -> tuple[Document, str | None]:
    """A document's record and its stored text."""
    kb, document = _reachable_document(catalog, principal, workspace_id, kb_id, document_id)
    return document, catalog.document_content(kb.id, document.id)


def _reachable_document(catalog: Catalog, principal: Principal, workspace_id: str, kb_id: str,
                        document_id: str) -> tuple[KnowledgeBase, Document]:
    """The KB (one the principal reaches) and its document; NotFound for either."""
    kb = get_knowledge_base(catalog, principal, workspace_id, kb_id)
    document = catalog.get_document(kb.id, document_id)
    if document is None:
        raise NotFound("Document not found")
    return kb, document


def _is_index_cursor(value: object) -> bool:
    return isinstance(value, list) and len(value) == 1 and type(value[0]) is int and value[0] >= 0


def _redacted(chunk: StoredChunk) -> StoredChunk:
    """A chunk with a detected secret keeps its place and size but not its text (a chunk stored before chunks
    were scanned is scanned now)."""
    flagged = chunk.secret if chunk.secret is not None else bool(find_secrets(chunk.content))
    return replace(chunk, content="", secret=True) if flagged else replace(chunk, secret=False)


def document_chunks(catalog: Catalog, chunks: ChunkReader, principal: Principal, workspace_id: str, kb_id: str,
                    document_id: str, limit: int, cursor: str | None) -> Page[StoredChunk]:
    """A page of the document's chunks by index, secrets redacted; none while the document is not `ready` (its
    current revision has no chunks yet, or will have none)."""
    kb, document = _reachable_document(catalog, principal, workspace_id, kb_id, document_id)
    after = int(decode_cursor(cursor, _is_index_cursor)[0]) if cursor else -1
    if document.status != "ready":
        return Page([], None)
    rows = chunks.document_chunks_page(kb, document, after, limit + 1)
    page = [_redacted(c) for c in rows[:limit]]
    return Page(page, encode_cursor([page[-1].chunk_index]) if len(rows) > limit else None)
