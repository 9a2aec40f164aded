"""Recall (`POST /v1/recall`): eligible memories by hybrid direct match plus graph neighbours, under a token budget.

The direct leg fuses lexical and vector candidates by reciprocal rank (hybrid.py); the graph leg runs when the
request names entities. Every request field changes the answer: scope and sensitivity and recency select the
eligible rows inside the store's queries, entities seed the graph leg and lift linked memories, max_items is k
and max_tokens a hard budget. When the query embedding fails the answer degrades to FTS5 alone (or a 503 when
asked to).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkb.errors import EmbeddingUnavailable, NotFound, ServiceUnavailable
from agentkb.models.domain import Principal
from agentkb.models.memory.api import SENSITIVITY_BITS, VISIBILITY_RANK
from agentkb.models.recall.api import MemoryView, RecallItem, RecallRequest, RecallResponse, RecallScope
from agentkb.ports.embedding import Embedder, Tokenizer
from agentkb.ports.graph import GraphStore
from agentkb.ports.memory import MemoryStore
from agentkb.services.memory.graph_links import seed_entities
from agentkb.services.recall.budget import fit_to_budget
from agentkb.services.recall.embed import RETRYABLE_CODES, embed_query_bounded
from agentkb.services.recall.graph_leg import MEMORIES_PER_ENTITY, GraphHit, graph_matches, links_by_entity
from agentkb.services.recall.hybrid import DirectHit, direct_hits
from agentkb.services.recall.surface import Shaping, agent_surface
from agentkb.services.search.fusion import fair_share

ENTITY_LIFT = 0.1  # added to the cosine of memories linked to a request entity, for ranking only
MAX_SEEDS = 64
LIFT_PER_ENTITY = 10  # linked memories lifted per request entity, times k
LEXICAL_POOL = 3  # the FTS leg ranks k * this, then applies the entity lift
RETRY_AFTER_S = 5
DAY_S = 86_400


@dataclass(frozen=True)
class RecallDeps:
    store: MemoryStore
    graph: GraphStore
    embedder: Embedder
    tokenizer: Tokenizer
    embed_timeout_s: float = 5.0
    backend: str = "local"  # backend_invoked when the embedding ran
    clock: Callable[[], float] = field(default=time.time)
    # (workspace, now) -> bounded usage-feedback boosts per memory id (services/usage_feedback.py); None: none
    feedback: Callable[[str, float], Mapping[int, float]] | None = None


@dataclass(frozen=True)
class RecallOptions:
    fallback_fts_only: bool = False  # ?fallback=fts_only
    fail_on_degraded: bool = False  # ?failOnDegraded=true
    graph_hops: int = 2


@dataclass
class RecallOutcome:
    response: RecallResponse
    degraded_code: str | None = None


@dataclass
class _Legs:
    """What the retrieval legs found, before the token budget; `degraded`: the response's vec_* and warning."""

    direct: list[RecallItem]
    graph: list[RecallItem]
    backend_invoked: str
    candidates: int
    degraded: dict[str, Any] = field(default_factory=dict)


def build_scope(request: RecallRequest, principal: Principal, now: float) -> RecallScope:
    """The eligibility of memories for this request and caller."""
    allowed = sum(bit for name, bit in SENSITIVITY_BITS.items() if getattr(request.sensitivity, name))
    days = request.limits.recency_days
    return RecallScope(
        workspace_id=request.workspace_id, audience_rank=VISIBILITY_RANK[request.scope.visibility],
        principal_id=principal.id, project_id=request.project_id,
        channel_id=request.channel.id if request.channel is not None else None,
        project_only=request.scope.project_only, include_unconfirmed=request.scope.include_unconfirmed,
        include_stale=request.scope.include_stale, now=now, since=now - int(days) * DAY_S if days else None,
        allowed_sensitivity=allowed)


def ranking_boosts(lifted: set[int], feedback: Mapping[int, float]) -> dict[int, float]:
    """What ranking adds to a memory's similarity: the entity lift, plus its usage feedback. Ranking only: the
    store applies boosts to eligible memories alone, so no boost can bring back an ineligible one."""
    boosts = dict(feedback)
    for mid in lifted:
        boosts[mid] = boosts.get(mid, 0.0) + ENTITY_LIFT
    return boosts


def _item(view: MemoryView, similarity: float, source: str, **graph_depth: int) -> RecallItem:
    """One returned memory; `graph_depth` only for a graph match (a direct one leaves it unset, so absent)."""
    score = min(1.0, max(0.0, similarity))
    return RecallItem(**view.model_dump(), distance=round(1.0 - similarity, 6), score=round(score, 6),
                      source=source, **graph_depth)


def _embed(deps: RecallDeps, request: RecallRequest, options: RecallOptions) -> list[float]:
    if options.fallback_fts_only:
        raise EmbeddingUnavailable("lexical-only recall was requested (fallback=fts_only)", code="fallback_fts_only")
    vector = embed_query_bounded(deps.embedder, request.query, deps.embed_timeout_s)
    stored = deps.store.vector_dimension(request.workspace_id)
    if stored is not None and stored != len(vector):
        raise EmbeddingUnavailable(f"the query embedding has {len(vector)} dimensions, stored memories {stored}",
                                   code="backend_mismatch")
    return vector


def recall(request: RecallRequest, principal: Principal, deps: RecallDeps,
           options: RecallOptions | None = None) -> RecallOutcome:
    """Run one recall end to end."""
    started = time.perf_counter()
    options = options or RecallOptions()
    if not principal.can_reach(request.workspace_id):
        raise NotFound("Workspace not found")
    scope = build_scope(request, principal, deps.clock())
    k = int(request.limits.max_items)
    entity_ids = seed_entities(deps.graph, scope.workspace_id, request.entities.named())
    # The seeds' links are read once, deep enough for the lift and for the graph leg (which reaches them again).
    seed_links = links_by_entity(deps.store, scope, entity_ids, max(LIFT_PER_ENTITY * k, MEMORIES_PER_ENTITY))
    lifted = {mid for ids in seed_links.values() for mid in ids[:LIFT_PER_ENTITY * k]}
    boosts = ranking_boosts(lifted, deps.feedback(scope.workspace_id, scope.now) if deps.feedback else {})
    try:
        vector = _embed(deps, request, options)
    except EmbeddingUnavailable as exc:
        if options.fail_on_degraded:
            retry = RETRY_AFTER_S if exc.code in RETRYABLE_CODES else None
            raise ServiceUnavailable("The embedding backend is degraded and failOnDegraded=true was set",
                                     retry_after_s=retry, details={"code": exc.code}) from exc
        legs = _lexical(deps, scope, request, k, boosts)
        legs.degraded = _degraded_fields(exc)
        return _finish(legs, deps, request, k, started, exc.code)
    ranked = direct_hits(deps.store, scope, request.query, vector, k, boosts)
    direct = ranked[:k]
    # The graph leg runs when the request names entities, which ask for their neighbourhood (README Decisions:
    # graph matches nobody asked for displaced better direct hits on LoCoMo).
    graph_found = _graph_leg(deps, scope, entity_ids, seed_links, direct, vector, k, options) if entity_ids else []
    graph = graph_found[:k]
    chosen = choose(direct, graph, k, boosts)
    views = deps.store.views(scope.workspace_id, [mid for mid, _ in chosen])
    keep = {mid for mid, _ in chosen}
    direct_items = [_item(views[h.memory_id], h.similarity, "direct") for h in direct
                    if h.memory_id in keep and h.memory_id in views]
    graph_items = [_item(views[h.memory_id], h.similarity, "graph", graph_depth=h.depth) for h in graph
                   if h.memory_id in keep and h.memory_id in views]
    legs = _Legs(direct_items, graph_items, deps.backend,
                 candidates=len({h.memory_id for h in ranked} | {h.memory_id for h in graph_found}))
    return _finish(legs, deps, request, k, started, None)


def _graph_leg(deps: RecallDeps, scope: RecallScope, entity_ids: list[str], seed_links: Mapping[str, list[int]],
               direct: list[DirectHit], vector: list[float], k: int, options: RecallOptions) -> list[GraphHit]:
    """Graph matches seeded by the request's entities and the direct hits' entities (never a direct hit)."""
    seeds = dict.fromkeys(entity_ids, 1.0)
    links = deps.store.entity_links(scope.workspace_id, [h.memory_id for h in direct])
    for hit in direct:
        for eid in links.get(hit.memory_id, []):
            if len(seeds) < MAX_SEEDS or eid in seeds:
                seeds[eid] = max(seeds.get(eid, 0.0), min(1.0, max(0.0, hit.similarity)))
    return graph_matches(deps.store, deps.graph, scope, seeds, vector, {h.memory_id for h in direct}, k + 1,
                         options.graph_hops, known=seed_links)


def choose(direct: list[DirectHit], graph: list[GraphHit], k: int,
           boosts: Mapping[int, float]) -> list[tuple[int, str]]:
    """The k memories returned, (memory_id, "d" | "g"): each leg is guaranteed half of k when it has candidates,
    the rest goes by relevance (fused + lifts for direct hits, graph relevance for graph matches)."""
    ranked = sorted([((h.memory_id, "d"), h.relevance + boosts.get(h.memory_id, 0.0)) for h in direct]
                    + [((h.memory_id, "g"), h.relevance) for h in graph], key=lambda c: (-c[1], c[0][1], c[0][0]))
    return fair_share([(key, key[1]) for key, _ in ranked], k)


def _lexical(deps: RecallDeps, scope: RecallScope, request: RecallRequest, k: int,
             boosts: Mapping[int, float]) -> _Legs:
    hits = deps.store.lexical_search(scope, request.query, k * LEXICAL_POOL)
    top = max((s for _, s in hits), default=0.0) or 1.0
    ranked = sorted(((mid, s / top) for mid, s in hits),
                    key=lambda h: (-(h[1] + boosts.get(h[0], 0.0)), h[0]))[:k]
    views = deps.store.views(scope.workspace_id, [mid for mid, _ in ranked])
    items = [_item(views[mid], score, "fts_fallback") for mid, score in ranked if mid in views]
    return _Legs(items, [], "none", len(hits))


def _degraded_fields(exc: EmbeddingUnavailable) -> dict[str, Any]:
    requested = exc.code == "fallback_fts_only"
    return {"vec_degraded": True, "vec_degraded_code": exc.code, "vec_degraded_reason": str(exc),
            "vec_error": None if requested else str(exc),
            "warning": "lexical-only recall (FTS5 BM25) was requested; the graph leg was skipped" if requested
            else "the query embedding failed: results are ranked by FTS5 BM25 alone and the graph leg was skipped"}


def _finish(legs: _Legs, deps: RecallDeps, request: RecallRequest, k: int, started: float,
            degraded: str | None) -> RecallOutcome:
    """Apply the token budget over direct + graph (in that order) and shape the response."""
    items = legs.direct + legs.graph
    budget = fit_to_budget(items, int(request.limits.max_tokens), deps.tokenizer)
    direct = [i for i in budget.items if i.source != "graph"]
    graph = [i for i in budget.items if i.source == "graph"]
    shaping = Shaping(candidates=max(legs.candidates, len(items)), max_items=k, capped=len(items),
                      returned=len(budget.items), content_truncated=budget.content_truncated)
    surface = agent_surface(shaping)
    shaped = {} if surface is None else {"agent_surface": surface}  # unset, so absent, when nothing was cut
    response = RecallResponse(
        **shaped, query=request.query, k=k, direct_matches=direct, graph_matches=graph, results=direct + graph,
        truncated=shaping.truncated, elapsed_ms=int((time.perf_counter() - started) * 1000),
        backend_invoked=legs.backend_invoked, **legs.degraded)
    return RecallOutcome(response, degraded)
