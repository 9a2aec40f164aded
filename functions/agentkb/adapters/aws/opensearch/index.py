"""Index port on OpenSearch Serverless: one index per embedding profile, BM25 + filtered kNN legs.

AOSS vector collections: no custom `_id` (our key lives in the `chunk_id` keyword field; deletes look `_id`s up
first), no refresh (writes show after ~10-60 s), no RRF pipeline (the legs are fused in the Lambda by
services/fusion.py). Document writes are best-effort atomic: the revision is claimed in the catalog, the new
chunks bulk-indexed, and only then is the record committed to the catalog (the commit point the API reports);
other revisions' records go after the commit, so a writer that fails or loses never takes the committed
revision's chunks out of search.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from agentkb.adapters.aws.errors import is_index_missing
from agentkb.adapters.aws.opensearch import bulk_load
from agentkb.adapters.aws.opensearch.documents import (
    DocumentRegistry,
    KnowledgeBaseLookup,
    ProfileMemory,
    document_record,
    documents_index,
    documents_index_body,
)
from agentkb.adapters.aws.opensearch.dsl import cosine, index_body, index_name
from agentkb.adapters.aws.opensearch.ops import LOOKUP_PAGE, bulk, ensure_index, lookup_ids
from agentkb.adapters.aws.opensearch.queries import (
    chunk_source,
    document_query,
    filter_query,
    hydrate_query,
    index_hit,
    leg_hit,
    lexical_query,
    query_text,
    ranked,
    tag_slots,
    vector_query,
    vectors_query,
)
from agentkb.adapters.aws.opensearch.transport import JsonClient
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

BULK_BATCH = 200


class OpenSearchIndex:
    """Index port on an AOSS vector collection. `kbs` resolves a KB's profile (-> its index), cached in-process;
    `profiles` (optional) knows the profiles the catalog has already read, so a search's legs do not read its KBs
    again after the service did, and follow the profile a reindex switched the KB to."""

    def __init__(self, client: JsonClient, kbs: KnowledgeBaseLookup, registry: DocumentRegistry, *,
                 prefix: str, generation: str, default_profile: EmbeddingProfile | None,
                 profiles: ProfileMemory | None = None) -> None:
        self.client = client
        self.kbs = kbs
        self.profiles = profiles
        self.registry = registry
        self.prefix = prefix
        self.generation = generation
        self.default_profile = default_profile
        self._known_indexes: set[str] = set()
        self._kb_index: dict[tuple[str, str], EmbeddingProfile] = {}
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

    def _profile_of(self, workspace_id: str, kb_id: str) -> EmbeddingProfile | None:
        profile = self.profiles.remembered_profile(workspace_id, kb_id) if self.profiles else None
        if profile is not None:  # the catalog's latest read of the KB: follows a reindex's switch (issue 25)
            return profile
        profile = self._kb_index.get((workspace_id, kb_id))
        if profile is None:  # keyed by workspace too: a KB id from another workspace never resolves
            kb = self.kbs.get_knowledge_base(workspace_id, kb_id)
            if kb is None:
                return None
            profile = self._kb_index[(workspace_id, kb_id)] = kb.profile
        return profile

    def _remember(self, name: str, hits: Sequence[LegHit]) -> None:
        with self._lock:
            for hit in hits:
                self._chunk_index[hit.chunk_id] = name
                self._chunk_index.move_to_end(hit.chunk_id)
            while len(self._chunk_index) > 10_000:
                self._chunk_index.popitem(last=False)

    # -- writes ---------------------------------------------------------------------------------------
    def write_document(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
                       replaces: int | None = None) -> None:
        """Claim, index, commit; then the older revisions' records go (this one's, when a higher one won)."""
        self.registry.claim_revision(document, replaces)  # RevisionConflict: nothing written
        name = self.ensure_index(kb.profile)
        self._kb_index[(kb.workspace_id, kb.id)] = kb.profile
        revision = document.revision
        if replaces is None:  # the name's only writer: replace whatever is there first, as it always did
            self._delete_revisions(name, kb, document.id, None)
        elif replaces == revision:  # a queued revision indexed again (the first attempt died part way)
            self._delete_revisions(name, kb, document.id, {"term": {"revision": revision}})
        slots = tag_slots(kb, document)
        for start in range(0, len(chunks), BULK_BATCH):
            lines: list[dict[str, Any]] = []
            for chunk in chunks[start:start + BULK_BATCH]:
                lines += [{"index": {"_index": name}}, chunk_source(kb, document, chunk, slots)]
            self._bulk(name, lines)
        self._write_document_record(name, kb, document, chunks, slots)
        committed = self.registry.put_document(document)  # the commit point
        if replaces is not None:
            self._delete_revisions(name, kb, document.id, {"range": {"revision": {"lt": revision}}} if committed
                                   else {"term": {"revision": revision}})

    def write_documents(self, kb: KnowledgeBase, items: Sequence[tuple[Document, Sequence[Chunk]]]) -> None:
        """The bulk path (Index port): a batch in a few _bulk requests (opensearch/bulk_load.py)."""
        bulk_load.write_documents(self, kb, items)

    def _delete_revisions(self, name: str, kb: KnowledgeBase, document_id: str,
                          revisions: dict[str, Any] | None) -> None:
        """A document's chunk and document records (of the revisions matching `revisions`; None: all)."""
        self._delete_chunks(name, kb, document_id, revisions)
        self._delete_chunks(documents_index(name), kb, document_id, revisions)

    def _write_document_record(self, name: str, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
                               slots: dict[str, Any]) -> None:
        records = documents_index(name)
        if records not in self._known_indexes:
            ensure_index(self.client, records, documents_index_body())
            self._known_indexes.add(records)
        self._bulk(records, [{"index": {"_index": records}}, document_record(kb, document, chunks, slots)])

    def delete_document(self, kb: KnowledgeBase, document_id: str) -> None:
        self._delete_revisions(index_name(self.prefix, kb.profile), kb, document_id, None)
        self.registry.delete_document(kb.id, document_id)

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Every chunk of the KB (looked up by id: AOSS has no delete-by-query); the catalog goes after."""
        name = index_name(self.prefix, kb.profile)
        self._delete_chunks(name, kb, None)
        self._delete_chunks(documents_index(name), kb, None)
        self._kb_index.pop((kb.workspace_id, kb.id), None)

    def _delete_chunks(self, name: str, kb: KnowledgeBase, document_id: str | None,
                       revisions: dict[str, Any] | None = None) -> None:
        """Delete a document's (or, with no document id, the KB's) records of one index, looked up by id."""
        filters: list[dict[str, Any]] = [{"term": {"knowledge_base_id": kb.id}}]  # KB ids are unique uuids
        if document_id is not None:
            filters.append({"term": {"document_id": document_id}})
        if revisions is not None:
            filters.append(revisions)
        sort = "document_id" if name.endswith("-documents") else "chunk_id"
        ids = list(lookup_ids(self.client, name, filters, sort))
        for start in range(0, len(ids), LOOKUP_PAGE):
            self._bulk(name, [{"delete": {"_index": name, "_id": i}} for i in ids[start:start + LOOKUP_PAGE]])

    def _bulk(self, name: str, lines: list[dict[str, Any]]) -> None:
        bulk(self.client, name, lines)

    # -- legs -----------------------------------------------------------------------------------------
    def _per_kb(self, query: IndexQuery, build: Callable[[str], dict[str, Any]], operation: str,
                documents: bool = False) -> list[tuple[str, dict[str, Any]]]:
        """Run one search per KB (each capped at limit_per_kb); a KB without an index yet has no hits."""
        out: list[tuple[str, dict[str, Any]]] = []
        for kb_id in query.knowledge_base_ids:
            profile = self._profile_of(query.workspace_id, kb_id)
            if profile is None or (query.vector and len(query.vector) != profile.dimension):
                continue  # a vector of another profile's width finds nothing, as on the embedded engine
            name = index_name(self.prefix, profile)
            target = documents_index(name) if documents else name
            status, found = self.client.call("POST", f"/{target}/_search", build(kb_id), operation=operation,
                                             accept=(404,))
            if is_index_missing(status, found):
                continue
            out.extend((name, raw) for raw in found["hits"]["hits"])
        return out

    def lexical_search(self, query: IndexQuery) -> list[LegHit]:
        text = query_text(query)
        if text is None:
            return []
        found = self._per_kb(query, lambda kb_id: lexical_query(query, kb_id, text), "lexical_search")
        return self._remembered(ranked([(n, leg_hit(r, float(r["_score"]))) for n, r in found]))

    def document_search(self, query: IndexQuery) -> list[DocumentHit]:
        text = query_text(query)
        if text is None:
            return []
        found = [DocumentHit(r["_source"]["document_id"], r["_source"]["knowledge_base_id"], float(r["_score"]))
                 for _, r in self._per_kb(query, lambda kb_id: document_query(query, kb_id, text),
                                          "document_search", documents=True)]
        return sorted(found, key=lambda d: (-d.score, d.document_id))

    def vector_search(self, query: IndexQuery) -> list[LegHit]:
        vector = list(query.vector or [])
        found = self._per_kb(query, lambda kb_id: vector_query(query, kb_id, vector), "vector_search")
        # AOSS cosinesimil score = (1 + cos) / 2
        return self._remembered(ranked([(n, leg_hit(r, 2.0 * float(r["_score"]) - 1.0)) for n, r in found]))

    def filter_search(self, query: IndexQuery) -> list[LegHit]:
        found = self._per_kb(query, lambda kb_id: filter_query(query, kb_id), "filter_search")
        return self._remembered([(n, leg_hit(r, 1.0)) for n, r in found])

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
            status, found = self.client.call("POST", f"/{name}/_search", hydrate_query(workspace_id, ids),
                                             operation="hydrate", accept=(404,))
            if is_index_missing(status, found):
                continue
            out.update((hit.chunk_id, hit) for hit in map(index_hit, found["hits"]["hits"]))
        return out

    def similarities(self, chunk_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Fetch the stored vectors (the only call whose _source carries embeddings) and cosine them here."""
        out: dict[str, float] = {}
        for name, ids in self._by_index(chunk_ids).items():
            status, found = self.client.call("POST", f"/{name}/_search", vectors_query(ids),
                                             operation="similarities", accept=(404,))
            if is_index_missing(status, found):
                continue
            for raw in found["hits"]["hits"]:
                source = raw.get("_source") or {}
                if source.get("embedding"):
                    out[source["chunk_id"]] = cosine(source["embedding"], vector)
        return out
