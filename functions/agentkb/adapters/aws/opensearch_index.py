"""Index port on OpenSearch Serverless: one index per embedding profile, BM25 + filtered kNN legs.

AOSS vector collections: no custom `_id` (our key lives in the `chunk_id` keyword field; deletes look `_id`s up
first), no refresh (writes show after ~10-60 s), no RRF pipeline (the legs are fused in the Lambda by
services/fusion.py). Document writes are best-effort atomic: old chunks are deleted, new ones bulk-indexed, and
only then is the document record written to the catalog, which is the commit point the API reports.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

from agentkb.adapters.aws.aws_errors import is_index_missing
from agentkb.adapters.aws.aws_http import JsonClient
from agentkb.adapters.aws.opensearch_ops import LOOKUP_PAGE, bulk, ensure_index, knn_method, lookup_ids
from agentkb.models.domain import (
    TAG_SLOTS,
    Chunk,
    CompiledTagFilter,
    Document,
    EmbeddingProfile,
    IndexHit,
    IndexQuery,
    KnowledgeBase,
)

SLOT_TYPES = {"text": "keyword", "number": "double", "date": "date", "boolean": "boolean"}
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


def index_name(prefix: str, profile: EmbeddingProfile) -> str:
    """A legal, stable index name per embedding profile (lowercase, no ':' '@' '/')."""
    return f"{prefix}-" + re.sub(r"[^a-z0-9._-]+", "-", profile.key.lower()).strip("-")


def index_body(profile: EmbeddingProfile, generation: str) -> dict[str, Any]:
    """Settings + mapping of a profile's index: cosine kNN, english BM25 text, keyword scope, typed tag slots."""
    properties: dict[str, Any] = {
        "embedding": {"type": "knn_vector", "dimension": profile.dimension, "method": knn_method(generation)},
        "content": {"type": "text", "analyzer": "english"},
        **{name: {"type": "keyword"} for name in ("workspace_id", "knowledge_base_id", "document_id", "chunk_id",
                                                  "document_name", "content_hash")},
        "source_url": {"type": "keyword", "index": False},
        "chunk_index": {"type": "integer"}, "token_count": {"type": "integer"}, "revision": {"type": "integer"},
        "tags": {"type": "object", "enabled": False},  # stored in _source for the results' metadata
    }
    for kind, count in TAG_SLOTS.items():
        properties.update({f"{kind}{i}": {"type": SLOT_TYPES[kind]} for i in range(1, count + 1)})
    return {"settings": {"index": {"knn": True}}, "mappings": {"properties": properties}}


def _wildcard(value: str, where: str) -> str:
    escaped = re.sub(r"([\\*?])", r"\\\1", value)
    return {"contains": f"*{escaped}*", "starts_with": f"{escaped}*", "ends_with": f"*{escaped}"}[where]


def compile_dsl_filters(filters: Sequence[CompiledTagFilter]) -> list[dict[str, Any]]:
    """Engine-neutral filters -> bool/filter clauses with compile_sql_filters' semantics (AND-ed)."""
    clauses: list[dict[str, Any]] = []
    for f in filters:
        field, op, value = f.slot, f.operator, f.value
        if op in ("contains", "starts_with", "ends_with"):
            clauses.append({"wildcard": {field: {"value": _wildcard(str(value), op), "case_insensitive": True}}})
        elif op == "not_contains":  # like SQL: NULL never matches, so the field must exist
            clauses.append({"bool": {"filter": [{"exists": {"field": field}}], "must_not": [
                {"wildcard": {field: {"value": _wildcard(str(value), "contains"), "case_insensitive": True}}}]}})
        elif op == "neq":
            clauses.append({"bool": {"filter": [{"exists": {"field": field}}],
                                     "must_not": [{"term": {field: value}}]}})
        elif op == "eq":
            clauses.append({"term": {field: value}})
        elif op == "between":
            clauses.append({"range": {field: {"gte": value, "lte": f.value_to}}})
        else:
            clauses.append({"range": {field: {op: value}}})
    return clauses


def _scope(workspace_id: str, kb_id: str, filters: Sequence[CompiledTagFilter]) -> list[dict[str, Any]]:
    return [{"term": {"workspace_id": workspace_id}}, {"term": {"knowledge_base_id": kb_id}},
            *compile_dsl_filters(filters)]


def _clean_metadata(tags: Any) -> dict[str, Any]:
    if not isinstance(tags, dict):
        return {}
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in tags.items()}


def _hit(raw: dict[str, Any], score: float, similarity: float | None) -> IndexHit:
    s = raw.get("_source") or {}
    return IndexHit(s["chunk_id"], s["knowledge_base_id"], s["document_id"], s.get("document_name"),
                    s.get("source_url"), s.get("content", ""), int(s.get("chunk_index", 0)),
                    _clean_metadata(s.get("tags")), score, similarity)


def _chunk_metadata(document: Document, chunk: Chunk) -> dict[str, Any]:
    """The hit metadata stored with a chunk: the document's tags, plus a PDF chunk's pages (a tag so named wins)."""
    if not chunk.pages or "pages" in document.tags:
        return dict(document.tags)
    return {**document.tags, "pages": list(chunk.pages)}


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Plain-Python cosine (no numpy in the AWS bundle); vectors are L2-normalised but we do not rely on it."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


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

    def _remember(self, name: str, hits: Sequence[IndexHit]) -> None:
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
        slots = {t.slot: document.tags[t.tag_name] for t in kb.tag_definitions if t.tag_name in document.tags}
        for start in range(0, len(chunks), BULK_BATCH):
            lines: list[dict[str, Any]] = []
            for c in chunks[start:start + BULK_BATCH]:
                lines.append({"index": {"_index": name}})
                lines.append({"chunk_id": c.id, "workspace_id": kb.workspace_id, "knowledge_base_id": kb.id,
                              "document_id": document.id, "document_name": document.name,
                              "source_url": document.source_url, "chunk_index": c.chunk_index,
                              "content": c.content, "token_count": c.token_count, "content_hash": c.content_hash,
                              "revision": document.revision, "tags": _chunk_metadata(document, c),
                              "embedding": c.embedding, **slots})
            self._bulk(name, lines)
        self.registry.put_document(document)  # the commit point

    def delete_document(self, kb: KnowledgeBase, document_id: str) -> None:
        name = index_name(self.prefix, kb.profile)
        self._delete_chunks(name, kb, document_id)
        self.registry.delete_document(kb.id, document_id)

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Every chunk of the KB (looked up by id: AOSS has no delete-by-query); the catalog goes after."""
        self._delete_chunks(index_name(self.prefix, kb.profile), kb, None)
        self._kb_index.pop((kb.workspace_id, kb.id), None)

    def _delete_chunks(self, name: str, kb: KnowledgeBase, document_id: str | None) -> None:
        filters: list[dict[str, Any]] = [{"term": {"knowledge_base_id": kb.id}}]  # KB ids are unique uuids
        if document_id is not None:
            filters.append({"term": {"document_id": document_id}})
        ids = list(lookup_ids(self.client, name, filters, "chunk_id"))
        for start in range(0, len(ids), LOOKUP_PAGE):
            self._bulk(name, [{"delete": {"_index": name, "_id": i}} for i in ids[start:start + LOOKUP_PAGE]])

    def _bulk(self, name: str, lines: list[dict[str, Any]]) -> None:
        bulk(self.client, name, lines)

    # -- legs -----------------------------------------------------------------------------------------
    def _per_kb(self, query: IndexQuery, build: Any, operation: str) -> list[tuple[str, dict[str, Any]]]:
        """Run one search per KB (each capped at limit_per_kb); a KB without an index yet has no hits."""
        out: list[tuple[str, dict[str, Any]]] = []
        for kb_id in query.knowledge_base_ids:
            name = self._index_of(query.workspace_id, kb_id)
            if name is None:
                continue
            status, found = self.client.call("POST", f"/{name}/_search", build(kb_id), operation=operation,
                                             accept=(404,))
            if is_index_missing(status, found):
                continue
            out.extend((name, raw) for raw in found["hits"]["hits"])
        return out

    def lexical_search(self, query: IndexQuery) -> list[IndexHit]:
        text = (query.text or "").strip()
        if not _WORD.search(text):
            return []

        def build(kb_id: str) -> dict[str, Any]:
            return {"size": query.limit_per_kb, "_source": HIT_FIELDS, "query": {"bool": {
                "must": [{"match": {"content": {"query": text}}}],
                "filter": _scope(query.workspace_id, kb_id, query.filters)}}}

        raws = self._per_kb(query, build, "lexical_search")
        hits = sorted(((n, _hit(r, float(r["_score"]), None)) for n, r in raws),
                      key=lambda item: (-item[1].score, item[1].chunk_id))
        return self._remembered(hits)

    def vector_search(self, query: IndexQuery) -> list[IndexHit]:
        vector = list(query.vector or [])

        def build(kb_id: str) -> dict[str, Any]:
            return {"size": query.limit_per_kb, "_source": HIT_FIELDS, "query": {"knn": {"embedding": {
                "vector": vector, "k": query.limit_per_kb,
                "filter": {"bool": {"filter": _scope(query.workspace_id, kb_id, query.filters)}}}}}}

        hits = []
        for name, raw in self._per_kb(query, build, "vector_search"):
            similarity = 2.0 * float(raw["_score"]) - 1.0  # AOSS cosinesimil score = (1 + cos) / 2
            hits.append((name, _hit(raw, similarity, similarity)))
        hits.sort(key=lambda item: (-item[1].score, item[1].chunk_id))
        return self._remembered(hits)

    def filter_search(self, query: IndexQuery) -> list[IndexHit]:
        def build(kb_id: str) -> dict[str, Any]:
            return {"size": query.limit_per_kb, "_source": HIT_FIELDS,
                    "sort": [{"document_name": "asc"}, {"chunk_index": "asc"}, {"chunk_id": "asc"}],
                    "query": {"bool": {"filter": _scope(query.workspace_id, kb_id, query.filters)}}}

        return self._remembered([(n, _hit(r, 1.0, 1.0)) for n, r in self._per_kb(query, build, "filter_search")])

    def _remembered(self, hits: list[tuple[str, IndexHit]]) -> list[IndexHit]:
        for name in {n for n, _ in hits}:
            self._remember(name, [h for n, h in hits if n == name])
        return [h for _, h in hits]

    def similarities(self, chunk_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Fetch the stored vectors (the only call whose _source carries embeddings) and cosine them here."""
        by_index: dict[str, list[str]] = {}
        fallback = index_name(self.prefix, self.default_profile) if self.default_profile else None
        for chunk_id in dict.fromkeys(chunk_ids):
            name = self._chunk_index.get(chunk_id, fallback)
            if name is not None:
                by_index.setdefault(name, []).append(chunk_id)
        out: dict[str, float] = {}
        for name, ids in by_index.items():
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
