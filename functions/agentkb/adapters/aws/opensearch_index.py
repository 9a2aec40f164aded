"""Index port on OpenSearch Serverless: one index per embedding profile, BM25 + filtered kNN legs.

AOSS vector collections: no custom `_id` (our key lives in the `chunk_id` keyword field; deletes look `_id`s up
first), no refresh (writes show after ~10-60 s), no RRF pipeline (the legs are fused in the Lambda by
services/fusion.py). Document writes are best-effort atomic: old chunks are deleted, new ones bulk-indexed, and
only then is the document record written to the catalog, which is the commit point the API reports.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

from agentkb.adapters.aws.aws_errors import is_index_missing
from agentkb.adapters.aws.aws_http import JsonClient
from agentkb.adapters.aws.opensearch_documents import document_record, documents_index, documents_index_body
from agentkb.adapters.aws.opensearch_dsl import clean_metadata, cosine, index_body, index_name, scope
from agentkb.adapters.aws.opensearch_ops import LOOKUP_PAGE, bulk, ensure_index, lookup_ids
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

LEG_FIELDS = ["chunk_id", "knowledge_base_id", "document_id"]  # what a leg needs: ids (and the score)
HIT_FIELDS = ["chunk_id", "knowledge_base_id", "document_id", "document_name", "source_url", "content",
              "chunk_index", "tags"]
BULK_BATCH = 200
_WORD = re.compile(r"\w", re.UNICODE)


class KnowledgeBaseLookup(Protocol):
    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None: ...


class DocumentRegistry(Protocol):
    """Where the document record is committed after the index accepted the chunks (the DynamoDB catalog)."""

    def put_document(self, document: Document) -> None: ...

    def delete_document(self, kb_id: str, document_id: str) -> None: ...


def _hit(raw: dict[str, Any]) -> IndexHit:
    s = raw.get("_source") or {}
    return IndexHit(s["chunk_id"], s["knowledge_base_id"], s["document_id"], s.get("document_name"),
                    s.get("source_url"), s.get("content", ""), int(s.get("chunk_index", 0)),
                    clean_metadata(s.get("tags")), 0.0)


def _chunk_metadata(document: Document, chunk: Chunk) -> dict[str, Any]:
    """The hit metadata stored with a chunk: the document's tags, plus a PDF chunk's pages (a tag so named wins)."""
    if not chunk.pages or "pages" in document.tags:
        return dict(document.tags)
    return {**document.tags, "pages": list(chunk.pages)}


def _leg_hit(raw: dict[str, Any], score: float) -> LegHit:
    s = raw.get("_source") or {}
    return LegHit(s["chunk_id"], s["knowledge_base_id"], s["document_id"], score)


class OpenSearchIndex:
    """Index port on an AOSS vector collection. `kbs` resolves a KB's profile (-> its index), cached in-process."""

    def __init__(self, client: JsonClient, kbs: KnowledgeBaseLookup, registry: DocumentRegistry, *,
                 prefix: str, generation: str, default_profile: EmbeddingProfile | None) -> None:
        self.client = client
        self.kbs = kbs
        self.registry = registry
        self.prefix = prefix
        self.generation = generation
        self.default_profile = default_profile
        self._known_indexes: set[str] = set()
        self._kb_index: dict[tuple[str, str], str] = {}
        self._chunk_index: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    # -- indexes --------------------------------------------------------------------------------------
    def ensure_index(self, profile: EmbeddingProfile) -> str:
        name = index_name(self.prefix, profile)
        if name in self._known_indexes:
            return name
        ensure_index(self.client, name, index_body(profile, self.generation))
        self._known_indexes.add(name)
        return name

    def _index_of(self, workspace_id: str, kb_id: str) -> str | None:
        name = self._kb_index.get((workspace_id, kb_id))
        if name is None:  # keyed by workspace too: a KB id from another workspace never resolves
            kb = self.kbs.get_knowledge_base(workspace_id, kb_id)
            if kb is None:
                return None
            name = self._kb_index[(workspace_id, kb_id)] = index_name(self.prefix, kb.profile)
        return name

    def _remember(self, name: str, hits: Sequence[LegHit]) -> None:
        with self._lock:
            for hit in hits:
                self._chunk_index[hit.chunk_id] = name
                self._chunk_index.move_to_end(hit.chunk_id)
            while len(self._chunk_index) > 10_000:
                self._chunk_index.popitem(last=False)

    # -- writes ---------------------------------------------------------------------------------------
    def write_document(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk]) -> None:
        name = self.ensure_index(kb.profile)
        self._kb_index[(kb.workspace_id, kb.id)] = name
        self._delete_chunks(name, kb, document.id)
        self._delete_chunks(documents_index(name), kb, document.id)
        slots = {t.slot: document.tags[t.tag_name] for t in kb.tag_definitions if t.tag_name in document.tags}
        for start in range(0, len(chunks), BULK_BATCH):
            lines: list[dict[str, Any]] = []
            for c in chunks[start:start + BULK_BATCH]:
                lines.append({"index": {"_index": name}})
                lines.append({"chunk_id": c.id, "workspace_id": kb.workspace_id, "knowledge_base_id": kb.id,
                              "document_id": document.id, "document_name": document.name,
                              "source_url": document.source_url, "chunk_index": c.chunk_index,
                              "content": c.content, "context": c.context, "token_count": c.token_count,
                              "content_hash": c.content_hash, "revision": document.revision,
                              "tags": _chunk_metadata(document, c), "embedding": c.embedding, **slots})
            self._bulk(name, lines)
        self._write_document_record(name, kb, document, chunks, slots)
        self.registry.put_document(document)  # the commit point

    def _write_document_record(self, name: str, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
                               slots: dict[str, Any]) -> None:
        records = documents_index(name)
        if records not in self._known_indexes:
            ensure_index(self.client, records, documents_index_body())
            self._known_indexes.add(records)
        self._bulk(records, [{"index": {"_index": records}}, document_record(kb, document, chunks, slots)])

    def delete_document(self, kb: KnowledgeBase, document_id: str) -> None:
        name = index_name(self.prefix, kb.profile)
        self._delete_chunks(name, kb, document_id)
        self._delete_chunks(documents_index(name), kb, document_id)
        self.registry.delete_document(kb.id, document_id)

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Every chunk of the KB (looked up by id: AOSS has no delete-by-query); the catalog goes after."""
        name = index_name(self.prefix, kb.profile)
        self._delete_chunks(name, kb, None)
        self._delete_chunks(documents_index(name), kb, None)
        self._kb_index.pop((kb.workspace_id, kb.id), None)

    def _delete_chunks(self, name: str, kb: KnowledgeBase, document_id: str | None) -> None:
        """Delete a document's (or, with no document id, the KB's) records of one index, looked up by id."""
        filters: list[dict[str, Any]] = [{"term": {"knowledge_base_id": kb.id}}]  # KB ids are unique uuids
        if document_id is not None:
            filters.append({"term": {"document_id": document_id}})
        sort = "document_id" if name.endswith("-documents") else "chunk_id"
        ids = list(lookup_ids(self.client, name, filters, sort))
        for start in range(0, len(ids), LOOKUP_PAGE):
            self._bulk(name, [{"delete": {"_index": name, "_id": i}} for i in ids[start:start + LOOKUP_PAGE]])

    def _bulk(self, name: str, lines: list[dict[str, Any]]) -> None:
        bulk(self.client, name, lines)

    # -- legs -----------------------------------------------------------------------------------------
    def _per_kb(self, query: IndexQuery, build: Any, operation: str,
                documents: bool = False) -> list[tuple[str, dict[str, Any]]]:
        """Run one search per KB (each capped at limit_per_kb); a KB without an index yet has no hits."""
        out: list[tuple[str, dict[str, Any]]] = []
        for kb_id in query.knowledge_base_ids:
            name = self._index_of(query.workspace_id, kb_id)
            if name is None:
                continue
            target = documents_index(name) if documents else name
            status, found = self.client.call("POST", f"/{target}/_search", build(kb_id), operation=operation,
                                             accept=(404,))
            if is_index_missing(status, found):
                continue
            out.extend((name, raw) for raw in found["hits"]["hits"])
        return out

    def lexical_search(self, query: IndexQuery) -> list[LegHit]:
        text = (query.text or "").strip()
        if not _WORD.search(text):
            return []

        def build(kb_id: str) -> dict[str, Any]:  # a chunk is found by its words and by its title and headings
            return {"size": query.limit_per_kb, "_source": LEG_FIELDS, "query": {"bool": {
                "must": [{"multi_match": {"query": text, "fields": ["content", "context"], "type": "most_fields"}}],
                "filter": scope(query.workspace_id, kb_id, query.filters)}}}

        hits = sorted(((n, _leg_hit(r, float(r["_score"]))) for n, r in self._per_kb(query, build, "lexical_search")),
                      key=lambda item: (-item[1].score, item[1].chunk_id))
        return self._remembered(hits)

    def document_search(self, query: IndexQuery) -> list[DocumentHit]:
        text = (query.text or "").strip()
        if not _WORD.search(text):
            return []

        def build(kb_id: str) -> dict[str, Any]:
            return {"size": query.limit_per_kb, "_source": ["document_id", "knowledge_base_id"], "query": {"bool": {
                "must": [{"match": {"text": {"query": text}}}],
                "filter": scope(query.workspace_id, kb_id, query.filters)}}}

        found = [DocumentHit(r["_source"]["document_id"], r["_source"]["knowledge_base_id"], float(r["_score"]))
                 for _, r in self._per_kb(query, build, "document_search", documents=True)]
        return sorted(found, key=lambda d: (-d.score, d.document_id))

    def vector_search(self, query: IndexQuery) -> list[LegHit]:
        vector = list(query.vector or [])

        def build(kb_id: str) -> dict[str, Any]:
            return {"size": query.limit_per_kb, "_source": LEG_FIELDS, "query": {"knn": {"embedding": {
                "vector": vector, "k": query.limit_per_kb,
                "filter": {"bool": {"filter": scope(query.workspace_id, kb_id, query.filters)}}}}}}

        hits = []
        for name, raw in self._per_kb(query, build, "vector_search"):
            similarity = 2.0 * float(raw["_score"]) - 1.0  # AOSS cosinesimil score = (1 + cos) / 2
            hits.append((name, _leg_hit(raw, similarity)))
        hits.sort(key=lambda item: (-item[1].score, item[1].chunk_id))
        return self._remembered(hits)

    def filter_search(self, query: IndexQuery) -> list[LegHit]:
        def build(kb_id: str) -> dict[str, Any]:
            return {"size": query.limit_per_kb, "_source": LEG_FIELDS,
                    "sort": [{"document_name": "asc"}, {"chunk_index": "asc"}, {"chunk_id": "asc"}],
                    "query": {"bool": {"filter": scope(query.workspace_id, kb_id, query.filters)}}}

        return self._remembered([(n, _leg_hit(r, 1.0)) for n, r in self._per_kb(query, build, "filter_search")])

    def _remembered(self, hits: list[tuple[str, LegHit]]) -> list[LegHit]:
        for name in {n for n, _ in hits}:
            self._remember(name, [h for n, h in hits if n == name])
        return [h for _, h in hits]

    def _by_index(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
        by_index: dict[str, list[str]] = {}
        fallback = index_name(self.prefix, self.default_profile) if self.default_profile else None
        for chunk_id in dict.fromkeys(chunk_ids):
            name = self._chunk_index.get(chunk_id, fallback)
            if name is not None:
                by_index.setdefault(name, []).append(chunk_id)
        return by_index

    def hydrate(self, workspace_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexHit]:
        """One search per index for the chunks a search returns: content, document fields and tags."""
        out: dict[str, IndexHit] = {}
        for name, ids in self._by_index(chunk_ids).items():
            body = {"size": len(ids), "_source": HIT_FIELDS, "query": {"bool": {"filter": [
                {"term": {"workspace_id": workspace_id}}, {"terms": {"chunk_id": ids}}]}}}
            status, found = self.client.call("POST", f"/{name}/_search", body, operation="hydrate", accept=(404,))
            if is_index_missing(status, found):
                continue
            out.update((hit.chunk_id, hit) for hit in map(_hit, found["hits"]["hits"]))
        return out

    def similarities(self, chunk_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Fetch the stored vectors (the only call whose _source carries embeddings) and cosine them here."""
        out: dict[str, float] = {}
        for name, ids in self._by_index(chunk_ids).items():
            body = {"size": len(ids), "_source": ["chunk_id", "embedding"],
                    "query": {"bool": {"filter": [{"terms": {"chunk_id": ids}}]}}}
            status, found = self.client.call("POST", f"/{name}/_search", body, operation="similarities",
                                             accept=(404,))
            if is_index_missing(status, found):
                continue
            for raw in found["hits"]["hits"]:
                source = raw.get("_source") or {}
                if source.get("embedding"):
                    out[source["chunk_id"]] = cosine(source["embedding"], vector)
        return out
