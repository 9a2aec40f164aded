"""Pure ranking pieces of graph search: query terms, rarity weights (IDF) and the coverage bonus.

Weights are integers so the store can sum and order them exactly: the same request on the same graph gives
the same order on every engine and every run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agentkb.models.graph import MAX_QUERY_TERMS, tokenize

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
