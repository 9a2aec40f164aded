"""Reciprocal rank fusion and fair-share selection: the same code for every engine."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from agentkb.models.domain import DocumentHit, LegHit

RRF_K = 60
K = TypeVar("K", bound=Hashable)
LEGS = ("bm25", "vector")  # the legs a hit's ranks name (X-Search-Leg-Ranks)


def fuse_reciprocal_rank(legs: Sequence[Sequence[K]], k: int = RRF_K) -> list[tuple[K, float]]:
    """Fuse ranked lists: score = sum over legs of 1/(k + rank), rank 1-based.

    Ties break by the best single-leg rank, then by the key itself, so the order is deterministic.
    """
    scores: dict[K, float] = {}
    best: dict[K, int] = {}
    for leg in legs:
        for rank, key in enumerate(leg, start=1):
            score = scores.get(key)
            if score is None:
                scores[key] = 1.0 / (k + rank)
                best[key] = rank
            else:
                scores[key] = score + 1.0 / (k + rank)
                if rank < best[key]:
                    best[key] = rank
    # Sort plain tuples (compared in C, no key function per item); the position breaks what str(key) cannot, as a
    # stable sort would, and keeps two keys from ever being compared themselves.
    items = list(scores.items())
    order = sorted([(-score, best[key], key if type(key) is str else str(key), i)
                    for i, (key, score) in enumerate(items)])
    return [items[entry[3]] for entry in order]


def fair_share(ranked: Sequence[tuple[K, str]], limit: int) -> list[K]:
    """Pick `limit` keys from a ranked list of (key, group) so each group first gets an equal share.

    Each group is first guaranteed floor(limit / groups) slots (at least one) when it has candidates; the
    remaining slots go to the best-ranked leftovers. The returned keys keep their original relative order.
    """
    if limit <= 0 or not ranked:
        return []
    groups = sorted({group for _, group in ranked})
    quota = max(1, limit // len(groups))
    taken: dict[str, int] = dict.fromkeys(groups, 0)
    chosen: set[int] = set()
    for position, (_, group) in enumerate(ranked):
        if len(chosen) >= limit:
            break
        if taken[group] < quota:
            taken[group] += 1
            chosen.add(position)
    for position in range(len(ranked)):
        if len(chosen) >= limit:
            break
        chosen.add(position)
    return [ranked[p][0] for p in sorted(chosen)]


def order_by_document(chunks: Sequence[LegHit], documents: Sequence[DocumentHit]) -> list[LegHit]:
    """The chunks whose document the document leg ranked, best document first; a document's chunks keep their
    order. Chunks of unranked documents are left out."""
    rank = {(d.knowledge_base_id, d.document_id): i for i, d in enumerate(documents)}
    ranked = [(position, i) for i, c in enumerate(chunks)
              if (position := rank.get((c.knowledge_base_id, c.document_id))) is not None]
    ranked.sort()  # (document rank, chunk position): a document's chunks stay in their own order
    return [chunks[i] for _, i in ranked]


def fuse_lexical(chunks: Sequence[LegHit], documents: Sequence[DocumentHit], k: int = RRF_K) -> list[LegHit]:
    """The lexical leg's ranking: chunk BM25 fused (RRF) with the BM25 of each chunk's whole document.

    A chunk is judged by its own words and by its document's: a short chunk of the document that best answers
    the query moves up, a lucky chunk of an unrelated document moves down.
    """
    by_id = {c.chunk_id: c for c in chunks}
    legs = [[c.chunk_id for c in chunks], [c.chunk_id for c in order_by_document(chunks, documents)]]
    return [by_id[chunk_id] for chunk_id, _ in fuse_reciprocal_rank(legs, k)]


def leg_ranks(legs: Mapping[str, Sequence[K]]) -> dict[K, dict[str, int | None]]:
    """Each key's 1-based rank in each named leg, None in a leg that did not return it (what a hybrid search
    fused: `{"bm25": 3, "vector": None}`). Keys no leg returned are absent."""
    out: dict[K, dict[str, int | None]] = {}
    for name, leg in legs.items():
        for rank, key in enumerate(leg, start=1):
            ranks = out.get(key)
            if ranks is None:
                ranks = out[key] = dict.fromkeys(legs)
            if ranks[name] is None:
                ranks[name] = rank
    return out
