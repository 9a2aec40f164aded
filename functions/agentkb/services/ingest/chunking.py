"""Structure-aware, token-aware chunking with overlap, in the embedding model's own tokens.

Every chunk knows where it sits: its `context` is the document title and the section headings above it, which
both retrieval legs index with the chunk (the chunk's `content` stays the document's own text).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentkb.ports.embedding import Tokenizer

# Chosen with bench/quality/scifact.py on SciFact (see README Decisions): 128-token windows, 24 overlapping.
DEFAULT_CHUNK_TOKENS = 128
DEFAULT_OVERLAP_TOKENS = 24
MAX_CONTEXT_CHARS = 240  # title + heading path: enough to place a chunk, short next to its 128 tokens
CONTEXT_SEPARATOR = " > "
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PROBE = 12  # a chunk's first characters, looked up in the previous chunk to find where their overlap starts


@dataclass(frozen=True, slots=True)
class TextChunk:
    index: int
    content: str
    token_count: int
    content_hash: str
    context: str = ""  # the title and headings above the chunk (" > "-joined), "" when the document has none

    @property
    def embedding_text(self) -> str:
        """What the embedder sees: the context line, then the content."""
        return f"{self.context}\n{self.content}" if self.context else self.content


@dataclass(frozen=True, slots=True)
class Section:
    """A run of text under one heading path (outermost heading first; empty before the first heading)."""

    headings: tuple[str, ...]
    text: str


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


def chunk_context(title: str | None, headings: Sequence[str]) -> str:
    """The " > "-joined title and heading path (a heading that repeats the title is kept once), bounded."""
    parts: list[str] = []
    for part in (title or "", *headings):
        part = " ".join(part.split())
        if part and (not parts or parts[-1] != part):
            parts.append(part)
    context = CONTEXT_SEPARATOR.join(parts)
    return context if len(context) <= MAX_CONTEXT_CHARS else context[:MAX_CONTEXT_CHARS - 1].rstrip() + "…"


def chunk_sections(title: str | None, sections: Sequence[Section], tokenizer: Tokenizer,
                   size: int = DEFAULT_CHUNK_TOKENS, overlap: int = DEFAULT_OVERLAP_TOKENS) -> list[TextChunk]:
    """Chunk each section on its own; every chunk carries the title and its section's headings as context.

    The entry point for any parser that knows a document's structure (markdown here; HTML, PDF, DOCX parsers
    hand over their title and sections the same way).
    """
    chunks: list[TextChunk] = []
    for section in sections:
        context = chunk_context(title, section.headings)
        for piece in chunk_text(section.text, tokenizer, size, overlap):
            chunks.append(replace(piece, index=len(chunks), context=context))
    return chunks


def markdown_sections(text: str) -> tuple[str | None, list[Section]]:
    """(title, sections) of a markdown text: ATX headings (outside code fences) open sections.

    The title is a level-1 heading that opens the document (only whitespace before it); its line is not part of
    any section's text.
    """
    title: str | None = None
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    lines: list[str] = []
    fence: str | None = None

    def flush() -> None:
        body = "\n".join(lines).strip()
        if body:
            sections.append(Section(tuple(h for _, h in stack), body))
        lines.clear()

    for line in text.splitlines():
        opened = _FENCE.match(line)
        if opened and (fence is None or opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)):
            fence = opened.group(1) if fence is None else None
        heading = _ATX.match(line) if fence is None and not opened else None
        if heading is None or not heading.group(2).strip():
            lines.append(line)
            continue
        level, name = len(heading.group(1)), heading.group(2).strip()
        if level == 1 and title is None and not sections and not stack and not "".join(lines).strip():
            title = name
            lines.clear()
            continue
        flush()
        stack = [(lv, h) for lv, h in stack if lv < level] + [(level, name)]
    flush()
    return title, sections


def chunk_markdown(text: str, tokenizer: Tokenizer, size: int = DEFAULT_CHUNK_TOKENS,
                   overlap: int = DEFAULT_OVERLAP_TOKENS, title: str | None = None) -> list[TextChunk]:
    """Chunk a markdown (or plain) text by its sections; `title` overrides a leading `# Title` line."""
    found, sections = markdown_sections(text)
    return chunk_sections(title or found, sections, tokenizer, size, overlap)


def reassemble(chunks: Sequence[str]) -> str:
    """A document's text from its ordered chunks, each overlap with the previous chunk kept once."""
    parts: list[str] = []
    previous = ""
    for chunk in chunks:
        parts.append(chunk[_overlap(previous, chunk):])
        previous = chunk
    return "\n".join(p for p in parts if p)


def _overlap(previous: str, chunk: str) -> int:
    """Length of the longest tail of `previous` (at least _PROBE characters) that `chunk` starts with."""
    probe = chunk[:_PROBE]
    if len(probe) < _PROBE:
        return 0
    start = previous.find(probe)
    while start >= 0:  # the earliest matching start is the longest overlap
        if chunk.startswith(previous[start:]):
            return len(previous) - start
        start = previous.find(probe, start + 1)
    return 0
