"""Request bodies of the document index: chunk sources, the four legs' queries and the hit readers.

Pure functions over models and plain dicts; opensearch_index.py does the I/O with them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.opensearch.dsl import clean_metadata, scope
from agentkb.models.domain import Chunk, Document, IndexHit, IndexQuery, KnowledgeBase, LegHit

LEG_FIELDS = ["chunk_id", "knowledge_base_id", "document_id"]  # what a leg needs: ids (and the score)
HIT_FIELDS = ["chunk_id", "knowledge_base_id", "document_id", "document_name", "source_url", "content",
              "chunk_index", "tags", "secret"]
_WORD = re.compile(r"\w", re.UNICODE)


def query_text(query: IndexQuery) -> str | None:
    """The query's text for a BM25 leg, or None when it has no word to match (the leg then has no hits)."""
    text = (query.text or "").strip()
    return text if _WORD.search(text) else None


def tag_slots(kb: KnowledgeBase, document: Document) -> dict[str, Any]:
    """The document's tag values under the KB's typed slot fields (what tag filters query)."""
    return {t.slot: document.tags[t.tag_name] for t in kb.tag_definitions if t.tag_name in document.tags}


def chunk_source(kb: KnowledgeBase, document: Document, chunk: Chunk, slots: dict[str, Any]) -> dict[str, Any]:
    """The stored `_source` of one chunk."""
    return {"chunk_id": chunk.id, "workspace_id": kb.workspace_id, "knowledge_base_id": kb.id,
            "document_id": document.id, "document_name": document.name, "source_url": document.source_url,
            "chunk_index": chunk.chunk_index, "content": chunk.content, "context": chunk.context,
            "token_count": chunk.token_count, "content_hash": chunk.content_hash, "revision": document.revision,
            "tags": _chunk_metadata(document, chunk), "embedding": chunk.embedding, "secret": chunk.secret, **slots}


def _chunk_metadata(document: Document, chunk: Chunk) -> dict[str, Any]:
    """The hit metadata stored with a chunk: the document's tags, plus a PDF chunk's pages (a tag so named wins)."""
    if not chunk.pages or "pages" in document.tags:
        return dict(document.tags)
    return {**document.tags, "pages": list(chunk.pages)}


def lexical_query(query: IndexQuery, kb_id: str, text: str) -> dict[str, Any]:
    """BM25 over chunks: a chunk is found by its words and by its title and headings."""
    return {"size": query.limit_per_kb, "_source": LEG_FIELDS, "query": {"bool": {
        "must": [{"multi_match": {"query": text, "fields": ["content", "context"], "type": "most_fields"}}],
        "filter": scope(query.workspace_id, kb_id, query.filters)}}}


def document_query(query: IndexQuery, kb_id: str, text: str) -> dict[str, Any]:
    """BM25 over whole-document records."""
    return {"size": query.limit_per_kb, "_source": ["document_id", "knowledge_base_id"], "query": {"bool": {
        "must": [{"match": {"text": {"query": text}}}],
        "filter": scope(query.workspace_id, kb_id, query.filters)}}}


def vector_query(query: IndexQuery, kb_id: str, vector: list[float]) -> dict[str, Any]:
    """Filtered kNN: the scope is applied inside the kNN search, not after it."""
    return {"size": query.limit_per_kb, "_source": LEG_FIELDS, "query": {"knn": {"embedding": {
        "vector": vector, "k": query.limit_per_kb,
        "filter": {"bool": {"filter": scope(query.workspace_id, kb_id, query.filters)}}}}}}


def filter_query(query: IndexQuery, kb_id: str) -> dict[str, Any]:
    """Tag-only leg in a deterministic order (document name, chunk index, chunk id)."""
    return {"size": query.limit_per_kb, "_source": LEG_FIELDS,
            "sort": [{"document_name": "asc"}, {"chunk_index": "asc"}, {"chunk_id": "asc"}],
            "query": {"bool": {"filter": scope(query.workspace_id, kb_id, query.filters)}}}


def hydrate_query(workspace_id: str, chunk_ids: list[str]) -> dict[str, Any]:
    """Content, document fields and tags of the given chunks of one workspace."""
    return {"size": len(chunk_ids), "_source": HIT_FIELDS, "query": {"bool": {"filter": [
        {"term": {"workspace_id": workspace_id}}, {"terms": {"chunk_id": chunk_ids}}]}}}


def vectors_query(chunk_ids: list[str]) -> dict[str, Any]:
    """The stored vectors of the given chunks (the only query whose _source carries embeddings)."""
    return {"size": len(chunk_ids), "_source": ["chunk_id", "embedding"],
            "query": {"bool": {"filter": [{"terms": {"chunk_id": chunk_ids}}]}}}


def index_hit(raw: dict[str, Any]) -> IndexHit:
    s = raw.get("_source") or {}
    return IndexHit(s["chunk_id"], s["knowledge_base_id"], s["document_id"], s.get("document_name"),
                    s.get("source_url"), s.get("content", ""), int(s.get("chunk_index", 0)),
                    clean_metadata(s.get("tags")), 0.0, secret=s.get("secret"))  # absent: stored before scanning


def leg_hit(raw: dict[str, Any], score: float) -> LegHit:
    s = raw.get("_source") or {}
    return LegHit(s["chunk_id"], s["knowledge_base_id"], s["document_id"], score)


def ranked(hits: Sequence[tuple[str, LegHit]]) -> list[tuple[str, LegHit]]:
    """Best score first, ties by chunk id (the same order on every engine)."""
    return sorted(hits, key=lambda item: (-item[1].score, item[1].chunk_id))
