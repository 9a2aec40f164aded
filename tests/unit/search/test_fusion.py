"""Reciprocal rank fusion and fair share: the pure pieces of ranking."""

import random

from agentkb.services.search.fusion import RRF_K, fair_share, fuse_reciprocal_rank


def test_both_legs_first_scores_two_over_61() -> None:
    fused = dict(fuse_reciprocal_rank([["a", "b"], ["a", "c"]]))
    assert RRF_K == 60
    assert fused["a"] == 2 / 61
    assert fused["b"] == 1 / 62 and fused["c"] == 1 / 62


def test_order_is_by_score_then_best_rank_then_key() -> None:
    # b and c tie on score (1/62 each); both have best rank 2 -> key order decides
    fused = fuse_reciprocal_rank([["a", "c"], ["a", "b"]])
    assert [k for k, _ in fused] == ["a", "b", "c"]
    # x: ranks 1 and 4 -> 1/61 + 1/64; y: ranks 2 and 2 -> 2/62 (higher)
    fused = fuse_reciprocal_rank([["x", "y"], ["p", "y", "q", "x"]])
    assert [k for k, _ in fused][:2] == ["y", "x"]


def test_fusion_is_deterministic_across_input_orders() -> None:
    legs = [["d1", "d2", "d3"], ["d3", "d2", "d1"]]
    assert fuse_reciprocal_rank(legs) == fuse_reciprocal_rank(legs)
    assert [k for k, _ in fuse_reciprocal_rank(legs)] == ["d1", "d3", "d2"]


def test_fair_share_gives_every_group_a_slot() -> None:
    ranked = [(f"a{i}", "A") for i in range(10)] + [("b0", "B"), ("c0", "C")]
    picked = fair_share(ranked, 3)
    assert set(picked) == {"a0", "b0", "c0"}


def test_fair_share_fills_leftovers_by_rank_and_keeps_order() -> None:
    ranked = [("a0", "A"), ("a1", "A"), ("a2", "A"), ("b0", "B"), ("a3", "A")]
    assert fair_share(ranked, 4) == ["a0", "a1", "a2", "b0"]
    assert fair_share(ranked, 2) == ["a0", "b0"]
    assert fair_share([], 5) == [] and fair_share(ranked, 0) == []


def test_the_lexical_ranking_weighs_each_chunk_by_its_document() -> None:
    from agentkb.models.domain import DocumentHit, LegHit
    from agentkb.services.search.fusion import fuse_lexical, order_by_document

    chunks = [LegHit("lucky", "kb", "other", 9.0), LegHit("a1", "kb", "answer", 8.0),
              LegHit("a2", "kb", "answer", 7.0), LegHit("x", "kb", "unranked", 6.0)]
    documents = [DocumentHit("answer", "kb", 12.0), DocumentHit("other", "kb", 3.0)]
    # chunks of ranked documents, best document first, each document's chunks in their own order
    assert [c.chunk_id for c in order_by_document(chunks, documents)] == ["a1", "a2", "lucky"]
    fused = [c.chunk_id for c in fuse_lexical(chunks, documents)]
    # a1 (2nd + 1st) beats the lucky chunk of a weak document (1st + 3rd); an unranked document's chunk is last
    assert fused == ["a1", "lucky", "a2", "x"]
    assert fuse_lexical([], documents) == []
    assert [c.chunk_id for c in fuse_lexical(chunks, [])] == ["lucky", "a1", "a2", "x"]  # chunk BM25 alone


# -- the faster fusion answers exactly what the plain one did (issue 17: a pure performance change) ----------------
def _reference_rrf(legs: list[list[object]], k: int = RRF_K) -> list[tuple[object, float]]:
    """The fusion as first written: a sort with a key function per item (kept here as the specification)."""
    scores: dict[object, float] = {}
    best: dict[object, int] = {}
    for leg in legs:
        for rank, key in enumerate(leg, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
            best[key] = min(best.get(key, rank), rank)
    return sorted(scores.items(), key=lambda item: (-item[1], best[item[0]], str(item[0])))


def _random_legs(rng: random.Random, keys: list[object]) -> list[list[object]]:
    # Legs of varied depth over a shared pool: many keys tie on score and best rank, some appear in one leg only.
    return [rng.sample(keys, rng.randint(0, len(keys))) for _ in range(rng.randint(1, 4))]


def test_fusion_matches_the_reference_on_random_legs() -> None:
    rng = random.Random(17)
    pools: list[list[object]] = [[f"c{i}" for i in range(30)], list(range(30)), [("kb", f"d{i}") for i in range(30)],
                                 ["7", 7, "a", ("a",)]]  # str(7) == "7": the tie beyond str(key) keeps first-seen order
    for _ in range(400):
        legs = _random_legs(rng, rng.choice(pools))
        assert fuse_reciprocal_rank(legs) == _reference_rrf(legs)
        assert fuse_reciprocal_rank(legs, k=1) == _reference_rrf(legs, k=1)


def test_lexical_fusion_matches_the_reference_on_random_legs() -> None:
    from agentkb.models.domain import DocumentHit, LegHit
    from agentkb.services.search.fusion import fuse_lexical, order_by_document

    rng = random.Random(18)
    for _ in range(300):
        documents = [(f"kb{rng.randint(0, 1)}", f"d{i}") for i in range(rng.randint(0, 12))]
        chunks = [LegHit(f"c{i}", *(documents[rng.randrange(len(documents))] if documents and rng.random() < 0.8
                                    else ("kb0", "unranked")), 1.0) for i in range(rng.randint(0, 40))]
        ranked_docs = [DocumentHit(d, kb, 1.0) for kb, d in rng.sample(documents, len(documents))]
        rank = {(d.knowledge_base_id, d.document_id): i for i, d in enumerate(ranked_docs)}
        expected_order = sorted([c for c in chunks if (c.knowledge_base_id, c.document_id) in rank],
                                key=lambda c: rank[(c.knowledge_base_id, c.document_id)])
        assert order_by_document(chunks, ranked_docs) == expected_order
        by_id = {c.chunk_id: c for c in chunks}
        reference = _reference_rrf([[c.chunk_id for c in chunks], [c.chunk_id for c in expected_order]])
        assert fuse_lexical(chunks, ranked_docs) == [by_id[str(chunk_id)] for chunk_id, _ in reference]


def test_leg_ranks_name_each_keys_rank_in_each_leg() -> None:
    from agentkb.services.search.fusion import leg_ranks

    ranks = leg_ranks({"bm25": ["a", "b"], "vector": ["c", "a", "a"]})
    assert ranks == {"a": {"bm25": 1, "vector": 2}, "b": {"bm25": 2, "vector": None},
                     "c": {"bm25": None, "vector": 1}}  # a key listed twice keeps its best (first) rank
    assert leg_ranks({"bm25": [], "vector": []}) == {}
