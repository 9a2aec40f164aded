"""Token-aware chunking with overlap, in the embedding model's own tokens."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from agentkb.ports import Tokenizer

# Chosen with bench/quality.py on SciFact (see README Decisions): 128-token windows, 24 overlapping.
DEFAULT_CHUNK_TOKENS = 128
DEFAULT_OVERLAP_TOKENS = 24


@dataclass(frozen=True, slots=True)
class TextChunk:
    index: int
    content: str
    token_count: int
    content_hash: str


def content_hash(text: str) -> str:
    """sha256 hex of the UTF-8 text: the identity of a chunk's or document's content."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _word_end(spans: list[tuple[int, int]], end: int, floor: int) -> int:
    """Move a window end back so it does not split a word (a token glued to the next one)."""
    cut = end
    while cut > floor and cut < len(spans) and spans[cut][0] == spans[cut - 1][1]:
        cut -= 1
    return cut if cut > floor else end


def chunk_text(text: str, tokenizer: Tokenizer, size: int = DEFAULT_CHUNK_TOKENS,
               overlap: int = DEFAULT_OVERLAP_TOKENS) -> list[TextChunk]:
    """Split text into windows of at most `size` tokens, consecutive windows sharing about `overlap` tokens."""
    if size < 8 or not 0 <= overlap < size:
        raise ValueError("chunk size must be >= 8 and 0 <= overlap < size")
    spans = tokenizer.spans(text)
    if not spans:
        return []
    chunks: list[TextChunk] = []
    start = 0
    while start < len(spans):
        end = min(start + size, len(spans))
        if end < len(spans):
            end = _word_end(spans, end, start + size // 2)
        piece = text[spans[start][0]:spans[end - 1][1]].strip()
        if piece:
            chunks.append(TextChunk(len(chunks), piece, end - start, content_hash(piece)))
        if end >= len(spans):
            break
        nxt = max(end - overlap, start + 1)
        while nxt > start + 1 and spans[nxt][0] == spans[nxt - 1][1]:
            nxt -= 1  # start the next window on a word boundary too
        start = nxt
    return chunks
