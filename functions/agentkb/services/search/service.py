"""Hybrid knowledge search: scope checks, lexical + vector legs, RRF, fair share, reranking."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Protocol

from agentkb.errors import BadRequest, DependencyError, NotFound, ServiceUnavailable
from agentkb.models.domain import IndexHit, IndexQuery, KnowledgeBase, LegHit, Principal, RerankOutcome
from agentkb.models.search import KnowledgeSearchData, KnowledgeSearchRequest, KnowledgeSearchResult
from agentkb.ports.catalog import Catalog
from agentkb.ports.embedding import Embedder, EmbedderRegistry, Reranker
from agentkb.ports.index import Index
from agentkb.services.search.fusion import fair_share, fuse_lexical, fuse_reciprocal_rank, leg_ranks
from agentkb.services.search.profiles import embedder_for
from agentkb.services.search.query_vectors import QueryVectorCache
from agentkb.services.search.tag_filters import compile_filters
from agentkb.services.secrets.documents import enforce_rerank_provenance

MIN_LEG_POOL = 50  # vector candidates per KB in hybrid mode
LEXICAL_POOL = 200  # chunk BM25 candidates per KB (cheap on every engine; the fusion needs depth)
DOCUMENT_POOL = 100  # whole-document BM25 candidates per KB
MAX_POOL = 100
Ranked = tuple[LegHit, float | None, float]  # (hit, cosine similarity when a leg knows it, rank score)
LegRanks = dict[str, dict[str, int | None]]  # chunk id -> its rank in each leg (fusion.leg_ranks)
_LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="search-leg")
QUERY_VECTORS = QueryVectorCache()


class StageTimer(Protocol):
    """Times the named stages of a search (bench/latency/stages.py); may be entered from the lexical leg's thread."""

    def stage(self, label: str) -> AbstractContextManager[object]: ...


class Untimed:
    """The default StageTimer: one shared no-op context, so an untimed search pays a method call per stage."""

    _NOTHING = nullcontext()

    def stage(self, label: str) -> AbstractContextManager[object]:
        return self._NOTHING


UNTIMED = Untimed()


@dataclass(frozen=True)
class SearchDeps:
    catalog: Catalog
    index: Index
    embedder: Embedder
    reranker: Reranker
    default_mode: str = "hybrid"
    stages: StageTimer = UNTIMED
    embedders: EmbedderRegistry | None = None  # embedders of the KBs' profiles other than the configured one


@dataclass
class SearchOutcome:
    data: KnowledgeSearchData
    degraded: str | None = None  # e.g. "vector_unavailable": the hybrid search ran lexical-only
    knowledge_bases: tuple[KnowledgeBase, ...] = ()  # as this search read them: callers need not read them again
    hits: tuple[IndexHit, ...] = ()  # the stored chunks behind data.results, in the same order (provenance)
    ranks: LegRanks = field(default_factory=dict)  # by chunk id: each hit's rank in the BM25 and vector legs

    def leg_ranks(self) -> list[dict[str, int | None]]:
        """Each result's rank in each leg, in result order (the X-Search-Leg-Ranks header)."""
        return [self.ranks.get(hit.chunk_id) or {"bm25": None, "vector": None} for hit in self.hits]


def load_knowledge_bases(catalog: Catalog, principal: Principal, workspace_id: str,
                         kb_ids: list[str]) -> list[KnowledgeBase]:
    """Every KB must exist in a workspace the caller reaches; absence and denial both answer 404."""
    if not principal.can_reach(workspace_id):
        raise NotFound("Knowledge base not found")
    kbs = []
    for kb_id in kb_ids:
        kb = catalog.get_knowledge_base(workspace_id, kb_id)
        if kb is None:
            raise NotFound("Knowledge base not found", details={"knowledgeBaseId": kb_id})
        kbs.append(kb)
    return kbs


def _pool_size(request: KnowledgeSearchRequest) -> int:
    if request.rerankerEnabled:
        return request.rerankerInputCount or min(MAX_POOL, 4 * int(request.topK))
    return int(request.topK)


def _embed(deps: SearchDeps, kbs: list[KnowledgeBase], query: str) -> list[float]:
    return QUERY_VECTORS.embed(embedder_for(deps.embedder, deps.embedders, kbs[0].profile), query)


def _result(hit: IndexHit, similarity: float, rank_score: float, rank: int) -> KnowledgeSearchResult:
    return KnowledgeSearchResult(
        knowledgeBaseId=hit.knowledge_base_id, documentId=hit.document_id, documentName=hit.document_name,
        sourceUrl=hit.source_url, content=hit.content, chunkIndex=hit.chunk_index, metadata=hit.metadata,
        similarity=similarity, rankScore=rank_score, rank=rank)


def lexical_ranking(index: Index, query: IndexQuery) -> list[LegHit]:
    """The lexical leg: chunk BM25 (context included) fused with whole-document BM25, best first."""
    limit = max(query.limit_per_kb, LEXICAL_POOL)
    chunks = index.lexical_search(_with(query, text=query.text, limit=limit))
    if not chunks:
        return []
    documents = index.document_search(_with(query, text=query.text, limit=max(query.limit_per_kb, DOCUMENT_POOL)))
    return fuse_lexical(chunks, documents)


def search_knowledge(request: KnowledgeSearchRequest, principal: Principal, deps: SearchDeps) -> SearchOutcome:
    """Run one knowledge search request end to end (the POST /api/v2/knowledge/search semantics)."""
    stage = deps.stages.stage
    kb_ids = request.kb_ids()
    with stage("service: read the knowledge bases"):
        kbs = load_knowledge_bases(deps.catalog, principal, request.workspaceId, kb_ids)
    query = (request.query or "").strip()
    filters = compile_filters(request.tagFilters or [], kbs)
    if not query and not filters:
        raise BadRequest("A query or at least one tag filter is required",
                         details=[{"path": "query", "message": "required when tagFilters are omitted"}])
    top_k = int(request.topK)
    pool = _pool_size(request)
    base = IndexQuery(request.workspaceId, tuple(kb_ids), filters, limit_per_kb=pool)
    degraded = None
    ranked: list[Ranked]
    ranks: LegRanks = {}
    if not query:
        ranked, vector = [(h, 1.0, 1.0) for h in deps.index.filter_search(base)], None
    else:
        if len({kb.profile for kb in kbs}) > 1:
            raise BadRequest("Query searches need the same embedding model and dimension in every knowledge base",
                             details=[{"path": "knowledgeBaseIds", "message": "incompatible embedding profiles"}])
        with stage("service: retrieve (mode, legs, fusion)"):
            mode = request.searchMode or deps.catalog.workspace_search_mode(request.workspaceId) or deps.default_mode
            ranked, degraded, vector, ranks = _retrieve(deps, kbs, base, query, mode, pool)
    with stage("service: fair share, hydration"):
        chosen = fair_share([((h, s, r), h.knowledge_base_id) for h, s, r in ranked], pool)
        hydrated = _hydrate(deps, request.workspaceId, chosen, vector)
    with stage("service: results and models"):
        outcome = _finish(request, deps, kb_ids, query, hydrated, top_k, degraded)
    outcome.knowledge_bases, outcome.ranks = tuple(kbs), ranks
    return outcome


def _hydrate(deps: SearchDeps, workspace_id: str, chosen: list[Ranked],
             vector: list[float] | None) -> list[tuple[IndexHit, float, float]]:
    """Content and fields of the chosen chunks only; the cosine of those no vector leg scored."""
    hits = deps.index.hydrate(workspace_id, [h.chunk_id for h, _, _ in chosen])
    missing = [h.chunk_id for h, s, _ in chosen if s is None and h.chunk_id in hits]
    sims = deps.index.similarities(missing, vector) if missing and vector is not None else {}
    return [(hits[h.chunk_id], round(s if s is not None else sims.get(h.chunk_id, 0.0), 6), r)
            for h, s, r in chosen if h.chunk_id in hits]


def _retrieve(deps: SearchDeps, kbs: list[KnowledgeBase], base: IndexQuery, query: str, mode: str,
              pool: int) -> tuple[list[Ranked], str | None, list[float] | None, LegRanks]:
    # The lexical leg needs no vector: it runs while the query is embedded (both release the GIL).
    lexical_leg = _LEGS.submit(_lexical_leg, deps, _with(base, text=query, limit=pool)) if mode == "hybrid" else None
    try:
        with deps.stages.stage("leg: query embedding"):
            vector = _embed(deps, kbs, query)
    except DependencyError as exc:
        if lexical_leg is None and not exc.retryable:
            raise  # permanent (no model, denied access): 500 INTERNAL_ERROR through errors.dependency_failure
        if lexical_leg is None:
            raise ServiceUnavailable("The embedding model is unavailable", retry_after_s=5,
                                     details={"reason": exc.code}) from exc
        lexical = lexical_leg.result()
        return ([(h, 0.0, 1.0 / (60 + i)) for i, h in enumerate(lexical, start=1)], "vector_unavailable", None,
                leg_ranks({"bm25": [h.chunk_id for h in lexical], "vector": []}))
    except BaseException:
        if lexical_leg is not None:
            lexical_leg.result()  # never leave a leg running behind an error
        raise
    if lexical_leg is None:
        hits, vector = _vector_leg(deps, kbs, base, query, vector, pool)
        return ([(h, round(h.score, 6), round(h.score, 6)) for h in hits], None, vector,
                leg_ranks({"bm25": [], "vector": [h.chunk_id for h in hits]}))
    semantic, vector = _vector_leg(deps, kbs, base, query, vector, max(pool, MIN_LEG_POOL))
    lexical = lexical_leg.result()
    by_id = {h.chunk_id: h for h in lexical}
    by_id.update({h.chunk_id: h for h in semantic})
    cosine = {h.chunk_id: h.score for h in semantic}
    legs = {"bm25": [h.chunk_id for h in lexical], "vector": [h.chunk_id for h in semantic]}
    with deps.stages.stage("fusion: hybrid RRF"):
        fused = fuse_reciprocal_rank(list(legs.values()))
    return [(by_id[c], cosine.get(c), score) for c, score in fused], None, vector, leg_ranks(legs)


def _vector_leg(deps: SearchDeps, kbs: list[KnowledgeBase], base: IndexQuery, query: str, vector: list[float],
                limit: int) -> tuple[list[LegHit], list[float]]:
    """The kNN leg. No hit at all may mean a reindex switched the KBs' profile since they were read (the vectors
    of the profile this query was embedded for are gone): then once more, embedded for the profile they have now."""
    hits = deps.index.vector_search(_with(base, vector=vector, limit=limit))
    if hits:
        return hits, vector
    now = [deps.catalog.get_knowledge_base(kb.workspace_id, kb.id) for kb in kbs]
    moved = [kb for kb in now if kb is not None]
    if len(moved) != len(kbs) or [kb.profile for kb in moved] == [kb.profile for kb in kbs]:
        return hits, vector
    vector = _embed(deps, moved, query)
    return deps.index.vector_search(_with(base, vector=vector, limit=limit)), vector


def _lexical_leg(deps: SearchDeps, query: IndexQuery) -> list[LegHit]:
    with deps.stages.stage("leg: lexical, on its pool thread"):
        return lexical_ranking(deps.index, query)


def _with(base: IndexQuery, *, text: str | None = None, vector: list[float] | None = None,
          limit: int) -> IndexQuery:
    return IndexQuery(base.workspace_id, base.knowledge_base_ids, base.filters, text, vector, limit)


def _finish(request: KnowledgeSearchRequest, deps: SearchDeps, kb_ids: list[str], query: str,
            chosen: list[tuple[IndexHit, float, float]], top_k: int, degraded: str | None) -> SearchOutcome:
    status = "not_requested"
    reranker_scores: list[float] | None = None
    if request.rerankerEnabled:
        if not query or not chosen:
            status = "skipped"
        else:
            enforce_rerank_provenance([h for h, _, _ in chosen])  # before any text leaves for the model
            try:
                outcome = deps.reranker.rerank(query, [h.content for h, _, _ in chosen], request.rerankerModel)
            except DependencyError:  # a failed reranker never fails the search: retrieval order is kept
                outcome = RerankOutcome("unavailable", reason="the reranker failed")
            status = outcome.status
            if outcome.status == "applied" and len(outcome.scores) == len(chosen):
                reranker_scores = outcome.scores
            elif outcome.status == "applied":
                status = "unavailable"  # a reranker answer that does not cover every candidate is not usable
    if reranker_scores is not None:
        order = sorted(range(len(chosen)), key=lambda i: (-reranker_scores[i], i))[:top_k]
        hits = [chosen[i][0] for i in order]
        results = []
        for rank, i in enumerate(order, start=1):
            hit, similarity, _ = chosen[i]
            result = _result(hit, similarity, reranker_scores[i], rank)
            result.rerankerScore = round(reranker_scores[i], 6)
            results.append(result)
    else:
        picked = fair_share([(c, c[0].knowledge_base_id) for c in chosen], top_k)
        hits = [h for h, _, _ in picked]
        results = [_result(h, s, r, rank) for rank, (h, s, r) in enumerate(picked, start=1)]
    data = KnowledgeSearchData(results=results, query=query, knowledgeBaseIds=kb_ids, topK=top_k,
                               totalResults=len(results), rerankerStatus=status)
    return SearchOutcome(data=data, degraded=degraded, hits=tuple(hits))
