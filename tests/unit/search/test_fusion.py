"""Reciprocal rank fusion and fair share: the pure pieces of ranking."""

from agentkb.services.fusion import RRF_K, fair_share, fuse_reciprocal_rank


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
    from agentkb.services.fusion import fuse_lexical, order_by_document

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
