"""Greedy packing and sentence-boundary compression with the real WordPiece tokenizer."""

from __future__ import annotations

from agentkb.adapters.embedded.embedder import local_tokenizer
from agentkb.models.snapshot import Candidate
from agentkb.services.snapshot.budget import MIN_COMPRESSED_TOKENS, pack, sentence_cuts, shorten

TOK = local_tokenizer()
SENTENCE = "The billing service retries a failed payment three times before it suspends the account. "


def cand(content: str, key: str = "k") -> Candidate:
    return Candidate(key, "documents", content, key, "r", key, "trusted-knowledge", "internal", "agentkb://x")


def items(*texts: str) -> list[tuple[Candidate, int]]:
    return [(cand(t, f"k{i}"), TOK.count(t)) for i, t in enumerate(texts)]


def test_items_that_fit_are_taken_in_order_and_smaller_later_items_still_fit() -> None:
    big, small = SENTENCE * 10, "Short note."
    packing = pack(items(small, big, small + " Again."), TOK.count(small) * 3, TOK)
    assert [p.candidate.key for p in packing.packed] == ["k0", "k2"]
    assert [c.key for c in packing.over_budget] == ["k1"]
    assert packing.used_tokens == sum(p.tokens for p in packing.packed) <= TOK.count(small) * 3


def test_overflowing_item_is_cut_at_a_sentence_boundary() -> None:
    text = SENTENCE * 8
    total = TOK.count(text)
    room = total // 2 + 3
    packing = pack(items(text), room, TOK)
    (packed,) = packing.packed
    assert packed.compressed and packed.content.endswith(".")
    assert MIN_COMPRESSED_TOKENS <= packed.tokens <= room
    assert packed.tokens == TOK.count(packed.content) and text.startswith(packed.content)


def test_compression_must_keep_a_quarter_and_at_least_32_tokens() -> None:
    text = SENTENCE * 20  # ~17 tokens per sentence
    total = TOK.count(text)
    assert shorten(text, total, total // 4 - 5, TOK) is None  # under 25% of the item
    assert shorten(SENTENCE * 3, TOK.count(SENTENCE * 3), 31, TOK) is None  # under 32 tokens
    assert shorten("word " * 200, 200, 150, TOK) is None  # no sentence boundary to cut at


def test_tiny_and_zero_room() -> None:
    assert pack(items("Hello there."), 0, TOK).packed == ()
    one = pack(items("Hi", "Hello there."), 1, TOK)
    assert [p.candidate.key for p in one.packed] == ["k0"] and one.used_tokens == 1


def test_sentence_cuts() -> None:
    assert sentence_cuts("One. Two! Three?") == [4, 9]
    assert sentence_cuts("para one\n\npara two") == [8]
