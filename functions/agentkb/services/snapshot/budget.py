"""Token budgeting of a snapshot: greedy packing in item order, sentence-boundary compression of an overflow.

Tokens are the local embedding model's WordPiece tokens (the `Tokenizer` port, `count()` without special
tokens): a stable, model-independent-enough proxy that every engine of this deployment counts identically.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentkb.models.snapshot import Candidate
from agentkb.ports.embedding import Tokenizer

MIN_COMPRESSED_TOKENS = 32  # a shortened item below this carries too little to be worth its tokens
MIN_COMPRESSED_SHARE = 4  # ... and it must keep at least 1/4 of the original item
_SENTENCE_END = re.compile(r"(?<=[.!?;:])[\"')\]]*\s+|\n\s*\n?")


@dataclass(frozen=True, slots=True)
class Packed:
    candidate: Candidate
    content: str
    tokens: int
    compressed: bool


@dataclass(frozen=True, slots=True)
class Packing:
    packed: tuple[Packed, ...]
    over_budget: tuple[Candidate, ...]  # in item order

    @property
    def used_tokens(self) -> int:
        return sum(p.tokens for p in self.packed)


def sentence_cuts(text: str) -> list[int]:
    """Character offsets where a sentence (or paragraph) ends, ascending, excluding the end of the text."""
    return [m.start() for m in _SENTENCE_END.finditer(text) if 0 < m.start() < len(text.rstrip())]


def shorten(text: str, total_tokens: int, room: int, tokenizer: Tokenizer) -> tuple[str, int] | None:
    """The longest sentence-aligned prefix within `room` tokens that is still useful, with its token count."""
    if room < MIN_COMPRESSED_TOKENS or MIN_COMPRESSED_SHARE * room < total_tokens:
        return None  # no prefix that fits could be useful
    spans = tokenizer.spans(text)
    if len(spans) <= room:
        return None
    limit = spans[room][0]  # the first character that would not fit
    for cut in reversed([c for c in sentence_cuts(text) if c <= limit]):
        piece = text[:cut].rstrip()
        tokens = tokenizer.count(piece)
        if tokens <= room:
            useful = tokens >= MIN_COMPRESSED_TOKENS and MIN_COMPRESSED_SHARE * tokens >= total_tokens
            return (piece, tokens) if useful else None
    return None


def pack(items: Sequence[tuple[Candidate, int]], room: int, tokenizer: Tokenizer) -> Packing:
    """Take items in order while they fit; an item that overflows is shortened if useful, else left out."""
    packed: list[Packed] = []
    over: list[Candidate] = []
    left = max(room, 0)
    for candidate, tokens in items:
        if tokens <= left:
            packed.append(Packed(candidate, candidate.content, tokens, False))
            left -= tokens
            continue
        short = shorten(candidate.content, tokens, left, tokenizer)
        if short is None:
            over.append(candidate)
            continue
        packed.append(Packed(candidate, short[0], short[1], True))
        left -= short[1]
    return Packing(tuple(packed), tuple(over))
