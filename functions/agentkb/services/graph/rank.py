"""Pure ranking pieces of graph search: query terms, rarity weights (IDF) and the coverage bonus.

Weights are integers so the store can sum and order them exactly: the same request on the same graph gives
the same order on every engine and every run.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

from agentkb.models.graph.records import GraphMatch, GraphMatchPage
from agentkb.models.graph.text import MAX_QUERY_TERMS, tokenize

SCORE_SCALE = 1000  # fixed-point factor of every score component
COVERAGE_WEIGHT = 1.0
COMMON_TERM_RATIO = 0.2  # a term in more than this share of the workspace's entities only boosts (cutoff frequency)
COMMON_TERM_MIN_ENTITIES = 1000  # below this graph size every term may match
TIER_EXACT, TIER_PREFIX, TIER_TERMS = 3, 2, 1


def query_terms(query: str) -> list[str]:
    """Distinct query tokens in first-seen order, at most MAX_QUERY_TERMS."""
    return list(dict.fromkeys(tokenize(query)))[:MAX_QUERY_TERMS]


def inverse_document_frequency(df: int, entity_count: int) -> float:
    """BM25-style IDF, always positive: rare terms weigh more."""
    n = max(entity_count, df)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def term_weights(terms: Sequence[str], df: Mapping[str, int], entity_count: int) -> tuple[tuple[str, int], ...]:
    """(term, fixed-point IDF) for the terms present in the workspace, sorted by term."""
    return tuple(sorted(
        (term, max(1, round(SCORE_SCALE * inverse_document_frequency(df[term], entity_count))))
        for term in terms if df.get(term, 0) > 0
    ))


def coverage_bonus(term_count: int) -> int:
    """Bonus per matched query term, so covering more of the query ranks higher at equal rarity."""
    return round(SCORE_SCALE * COVERAGE_WEIGHT / term_count) if term_count else 0


def split_terms(weights: tuple[tuple[str, int], ...], df: Mapping[str, int],
                entity_count: int) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """(matching, boost): common terms only boost entities matched by rarer ones, unless every term is common.

    The cutoff-frequency rule keeps a query like `invoice py` from turning every `.py` file into a match.
    """
    if entity_count < COMMON_TERM_MIN_ENTITIES:
        return weights, ()
    cutoff = COMMON_TERM_RATIO * entity_count
    rare = tuple(w for w in weights if df[w[0]] <= cutoff)
    if not rare:
        return weights, ()
    return rare, tuple(w for w in weights if df[w[0]] > cutoff)


# ---- merging a store's match legs (both engines): exact/prefix names first, then term matches ----

NamedMatches = dict[str, tuple[int, str, str]]  # entity id -> (tier, kind, label)


def keep_best_tier(named: NamedMatches, entity_id: str, tier: int, kind: str, label: str) -> None:
    """Record a named match, keeping the entity's best tier."""
    if entity_id not in named or named[entity_id][0] < tier:
        named[entity_id] = (tier, kind, label)


def term_fetch_limit(named_count: int, limit: int) -> int:
    """How many term matches to rank: named matches outrank every term-only match, so at most `limit` of them can
    push term matches out (and `limit` named matches leave no room at all)."""
    return limit + named_count if named_count < limit else 0


def named_scores(postings: Iterable[tuple[str, str, int]], matching: Collection[str],
                 bonus: int) -> dict[str, tuple[int, int]]:
    """Entity id -> (term score, matching-term count) from (entity id, term, weighted score) postings."""
    out: dict[str, tuple[int, int]] = {}
    for entity_id, term, score in postings:
        total, hits = out.get(entity_id, (0, 0))
        out[entity_id] = (total + score + bonus, hits + (term in matching))
    return out


def merge_matches(named: NamedMatches, scores: Mapping[str, tuple[int, int]],
                  top: Iterable[tuple[str, int, str, str]], term_total: int, limit: int) -> GraphMatchPage:
    """One page: by tier, score, kind, label, id. A named match without a matching term adds to the total."""
    rows = [(-tier, -scores.get(i, (0, 0))[0], kind, label, i) for i, (tier, kind, label) in named.items()]
    rows += [(-TIER_TERMS, -score, kind, label, i) for i, score, kind, label in top if i not in named]
    rows.sort()
    total = term_total + sum(1 for i in named if scores.get(i, (0, 0))[1] == 0)
    return GraphMatchPage(total, tuple(GraphMatch(r[4], -r[0], -r[1]) for r in rows[:limit]))
