"""The whole-document BM25 leg on OpenSearch: one record per document in `<chunk index>-documents`.

A document's record holds its title, headings and text (its chunks put back together without their overlaps)
and the same scope and tag slot fields as its chunks, so the document leg filters exactly like the chunk legs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.models.domain import TAG_SLOTS, Chunk, Document, KnowledgeBase
from agentkb.services.chunking import reassemble

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
