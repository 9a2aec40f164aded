"""`POST /ob1/recall`: eligibility as OB1 gates it, ranking by similarity + provenance, review and use policy +
usage feedback, OB1's response shape, and a trace of every recall.

Gates (inside the store's queries, before ranking; models/eligibility.py): pending memories that need confirmation
only with `include_unconfirmed`; stale, superseded, rejected and disputed only with `include_stale`; personal ones
only when `scope.visibility` is `personal` (and only the caller's own); `project_only` keeps one project when the
request names one; `recency_days` and the sensitivity flags narrow further, as on /v1/recall.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from agentkb.errors import EmbeddingUnavailable, NotFound
from agentkb.models.domain import Principal
from agentkb.models.memory.api import ENTITY_KINDS, SENSITIVITY_BITS, VISIBILITY_RANK
from agentkb.models.memory.detail import MemoryDetail
from agentkb.models.ob1.api import Ob1RecallRequest
from agentkb.models.ob1.responses import Ob1RecallResponse
from agentkb.models.recall.api import RecallScope
from agentkb.models.recall.trace import RecallTrace, TraceItem
from agentkb.ports.embedding import Embedder, Tokenizer
from agentkb.ports.graph import GraphStore
from agentkb.ports.memory import MemoryStore, RecallTraceStore
from agentkb.services.memory.graph_links import seed_entities
from agentkb.services.ob1.memory import policy_score, response_memory, state_of, use_policy
from agentkb.services.ob1.writeback import response_family
from agentkb.services.recall.embed import embed_query_bounded
from agentkb.services.recall.hybrid import direct_hits
from agentkb.services.recall.service import ranking_boosts
from agentkb.services.recall.usage_feedback import feedback_reader

POOL_FACTOR, MIN_POOL = 4, 20  # lexical candidates scored per answer slot when the embedding is unavailable
DAY_S = 86_400


@dataclass(frozen=True)
class Ob1RecallDeps:
    store: MemoryStore
    graph: GraphStore
    embedder: Embedder
    tokenizer: Tokenizer
    traces: RecallTraceStore
    embed_timeout_s: float = 5.0
    clock: Callable[[], float] = field(default=time.time)


@dataclass(frozen=True)
class Ob1RecallOutcome:
    response: Ob1RecallResponse
    degraded_code: str | None = None


def ob1_scope(request: Ob1RecallRequest, principal: Principal, now: float) -> RecallScope:
    """OB1's gates as a recall scope (the one compiled eligibility predicate applies it in every engine)."""
    personal = (request.scope.visibility or "").strip().lower() == "personal"
    allowed = sum(bit for name, bit in SENSITIVITY_BITS.items() if request.sensitivity.get(name))
    days = request.limits.recency_days
    return RecallScope(
        workspace_id=request.workspace_id, audience_rank=VISIBILITY_RANK["personal" if personal else "channel"],
        principal_id=principal.id, project_id=request.project_id, channel_id=request.channel.id,
        project_only=request.scope.project_only and request.project_id is not None,
        include_unconfirmed=request.scope.include_unconfirmed, include_stale=request.scope.include_stale, now=now,
        since=now - days * DAY_S if days else None, allowed_sensitivity=allowed)


def _candidates(request: Ob1RecallRequest, scope: RecallScope, deps: Ob1RecallDeps, k: int,
                boosts: dict[int, float]) -> tuple[list[tuple[int, float, float]], str | None]:
    """(memory id, similarity, relevance) of the eligible candidates: the hybrid direct leg of /v1/recall (fused
    relevance, true cosine), or lexical relevance alone when the embedding is unavailable."""
    try:
        vector = embed_query_bounded(deps.embedder, request.query, deps.embed_timeout_s)
        stored = deps.store.vector_dimension(scope.workspace_id)
        if stored is not None and stored != len(vector):
            raise EmbeddingUnavailable("query and stored embeddings differ", code="backend_mismatch")
    except EmbeddingUnavailable as exc:
        hits = deps.store.lexical_search(scope, request.query, max(POOL_FACTOR * k, MIN_POOL))
        top = max((s for _, s in hits), default=0.0) or 1.0
        return [(mid, s / top, s / top) for mid, s in hits], exc.code
    return [(h.memory_id, h.similarity, h.relevance) for h in direct_hits(
        deps.store, scope, request.query, vector, k, boosts)], None


def _within_budget(deps: Ob1RecallDeps, ranked: list[MemoryDetail], max_tokens: int) -> list[MemoryDetail]:
    """The ranked memories that fit `max_tokens` (summary + content), best first; one that does not fit is skipped."""
    kept, used = [], 0
    for d in ranked:
        cost = deps.tokenizer.count(f"{d.description}\n{d.body}")
        if used + cost <= max_tokens:
            kept.append(d)
            used += cost
    return kept


def ob1_recall(request: Ob1RecallRequest, principal: Principal, deps: Ob1RecallDeps) -> Ob1RecallOutcome:
    """Recall, rank, trace."""
    if not principal.can_reach(request.workspace_id):
        raise NotFound("Workspace not found")
    now = deps.clock()
    scope = ob1_scope(request, principal, now)
    k = request.limits.max_items
    named = [(ENTITY_KINDS[cat], n.strip()) for cat, names in request.entities.items() if cat in ENTITY_KINDS
             for n in names if n.strip()]
    entity_ids = seed_entities(deps.graph, scope.workspace_id, named)
    lifted = {mid for mid, _ in deps.store.linked_memories(scope, entity_ids, 10 * k)} if entity_ids else set()
    feedback = feedback_reader(deps.traces)(scope.workspace_id, now)
    boosts = ranking_boosts(lifted, feedback)
    hits, degraded = _candidates(request, scope, deps, k, boosts)
    details = deps.store.get_many(scope.workspace_id, [mid for mid, _, _ in hits], principal.id)
    # Scores equal to 1e-6 tie (float noise differs between engines): ties break by memory id.
    scored = sorted(((relevance + boosts.get(mid, 0.0) + policy_score(state_of(details[mid])), mid, sim)
                     for mid, sim, relevance in hits if mid in details), key=lambda c: (-round(c[0], 6), c[1]))
    returned = _within_budget(deps, [details[mid] for _, mid, _ in scored[:k]], request.limits.max_tokens)
    ranks = {d.memory_id: position for position, d in enumerate(returned, start=1)}
    trace = RecallTrace(
        request_id=uuid.uuid4().hex, workspace_id=scope.workspace_id, principal_id=principal.id, created_at=now,
        request=request.model_dump(mode="json"),
        policy={"audience": "personal" if scope.audience_rank == 0 else "shared", "project_only": scope.project_only,
                "include_unconfirmed": scope.include_unconfirmed, "include_stale": scope.include_stale,
                "max_items": k, "max_tokens": request.limits.max_tokens, "degraded": degraded},
        items=tuple(TraceItem(mid, ranks.get(mid), round(sim, 6), round(score, 6), round(feedback.get(mid, 0.0), 6),
                              use_policy(state_of(details[mid]))) for score, mid, sim in scored))
    deps.traces.put(trace)
    response = Ob1RecallResponse(schema_version=response_family(request.schema_version, "recall"),
                                 request_id=trace.request_id, memories=[response_memory(d) for d in returned])
    return Ob1RecallOutcome(response, degraded)
