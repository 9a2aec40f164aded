"""The whole-document BM25 leg on OpenSearch (one record per document in `<chunk index>-documents`), and what
the document index reads and commits through (the catalog's side of a document write).

A document's record holds its title, headings and text (its chunks put back together without their overlaps)
and the same scope and tag slot fields as its chunks, so the document leg filters exactly like the chunk legs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from agentkb.models.domain import TAG_SLOTS, Chunk, Document, EmbeddingProfile, KnowledgeBase
from agentkb.services.ingest.chunking import reassemble


class KnowledgeBaseLookup(Protocol):
    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None: ...


class ProfileMemory(Protocol):
    """Profiles of KBs already read in this process (the catalog's): a lookup that never makes a call."""

    def remembered_profile(self, workspace_id: str, kb_id: str) -> EmbeddingProfile | None: ...


class DocumentRegistry(Protocol):
    """Where the document record is committed after the index accepted the chunks (the DynamoDB catalog)."""

    def claim_revision(self, document: Document, replaces: int | None) -> None:
        """Take the document's revision for its name (RevisionConflict unless the name is at `replaces`)."""
        ...

    def put_document(self, document: Document) -> bool:
        """Commit the record; False when a higher revision (or a delete) of the document committed first."""
        ...

    def delete_document(self, kb_id: str, document_id: str) -> None: ...


SLOT_TYPES = {"text": "keyword", "number": "double", "date": "date", "boolean": "boolean"}


def documents_index(chunk_index: str) -> str:
    return f"{chunk_index}-documents"


def documents_index_body() -> dict[str, Any]:
    """Settings + mapping of a documents index: english BM25 text, keyword scope, typed tag slots."""
    properties: dict[str, Any] = {
        "text": {"type": "text", "analyzer": "english"},
        **{name: {"type": "keyword"} for name in ("workspace_id", "knowledge_base_id", "document_id")},
        "revision": {"type": "integer"},
    }
    for kind, count in TAG_SLOTS.items():
        properties.update({f"{kind}{i}": {"type": SLOT_TYPES[kind]} for i in range(1, count + 1)})
    return {"mappings": {"properties": properties}}


def document_record(kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
                    slots: dict[str, Any]) -> dict[str, Any]:
    contexts = "\n".join(dict.fromkeys(c.context for c in chunks if c.context))
    return {"document_id": document.id, "workspace_id": kb.workspace_id, "knowledge_base_id": kb.id,
            "revision": document.revision, "text": f"{contexts}\n{reassemble([c.content for c in chunks])}".strip(),
            **slots}
