"""The direct leg of recall: lexical and vector candidates over the eligible memories, fused by reciprocal rank.

Both candidate lists come from the store with the compiled eligibility predicate inside their queries (the vector
leg's exact cosine kNN, the lexical leg's BM25 over name, description and body), so fusion only ever sees eligible
memories. Reciprocal rank fusion (Cormack et al. 2009, k = RRF_K): a memory's fused relevance is the sum over the
legs that found it of weight / (RRF_K + rank), divided by what rank 1 in every leg would give, so it lies in (0, 1]
and the entity and usage-feedback lifts (additive, <= 0.1 each) keep the weight they had over cosine. Ties break by
memory id, never by a float that differs between engines. Every hit keeps its true cosine to the query: the
lexical-only ones are scored with `similarities`, so `distance` and `score` mean what they always meant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentkb.models.recall.api import RecallScope
from agentkb.ports.memory import MemoryStore

RRF_K = 60
VECTOR_WEIGHT = 1.0
LEXICAL_WEIGHT = 1.0
VECTOR_DEPTH, LEXICAL_DEPTH = 2, 2  # candidates each leg ranks, per returned item (README Decisions)


@dataclass(frozen=True, slots=True)
class DirectHit:
    memory_id: int
    similarity: float  # the true cosine of the memory to the query
    relevance: float  # fused, in (0, 1]: ranking only
    vector_rank: int | None  # 1-based rank in each leg that found it
    lexical_rank: int | None


def rrf(ranks: Mapping[str, int | None], weights: Mapping[str, float], k: int | None = None) -> float:
    """Normalised reciprocal rank fusion: 1.0 for rank 1 in every leg, 0 for found by none."""
    k = RRF_K if k is None else k
    full = sum(weights.values()) / (k + 1)
    return sum(weights[leg] / (k + rank) for leg, rank in ranks.items() if rank is not None) / full


def ranks(hits: Sequence[tuple[int, float]]) -> dict[int, int]:
    """Competition ranks of one leg's (memory_id, score) hits: scores equal to 6 significant digits share a rank
    (float noise differs between engines; equal texts must tie), so such ties break by memory id after fusion."""
    keyed = sorted((-float(f"{score:.6g}"), mid) for mid, score in hits)
    out: dict[int, int] = {}
    for position, (score, mid) in enumerate(keyed, start=1):
        out[mid] = out[keyed[position - 2][1]] if position > 1 and keyed[position - 2][0] == score else position
    return out


def fuse(vector: Sequence[tuple[int, float]], lexical: Sequence[tuple[int, float]],
         similarities: Mapping[int, float], boosts: Mapping[int, float] | None = None,
         weights: Mapping[str, float] | None = None, k: int | None = None) -> list[DirectHit]:
    """The union of both ranked legs, best fused relevance (+ boosts) first, then memory id."""
    weights = weights or {"vector": VECTOR_WEIGHT, "lexical": LEXICAL_WEIGHT}
    boosts = boosts or {}
    vector_rank, lexical_rank = ranks(vector), ranks(lexical)
    cosine = {**similarities, **dict(vector)}
    hits = [DirectHit(mid, cosine.get(mid, 0.0),
                      rrf({"vector": vector_rank.get(mid), "lexical": lexical_rank.get(mid)}, weights, k),
                      vector_rank.get(mid), lexical_rank.get(mid))
            for mid in dict.fromkeys([*vector_rank, *lexical_rank])]
    hits.sort(key=lambda h: (-round(h.relevance + boosts.get(h.memory_id, 0.0), 9), h.memory_id))
    return hits


def direct_hits(store: MemoryStore, scope: RecallScope, query: str, vector: Sequence[float], k: int,
                boosts: Mapping[int, float] | None = None) -> list[DirectHit]:
    """The fused candidates of an answer of k items: both legs over the eligible memories (VECTOR_DEPTH and
    LEXICAL_DEPTH times k deep: deeper pools let memories both legs rank low outrank either leg's best), fused;
    lexical-only hits get their true cosine. /v1/recall, /ob1/recall and snapshots all rank through this."""
    by_vector = store.vector_search(scope, vector, max(1, round(VECTOR_DEPTH * k)))
    by_text = store.lexical_search(scope, query, max(1, round(LEXICAL_DEPTH * k)))
    known = {mid for mid, _ in by_vector}
    missing = [mid for mid, _ in by_text if mid not in known]
    sims = store.similarities(scope.workspace_id, missing, vector) if missing else {}
    return fuse(by_vector, by_text, sims, boosts)
