"""What extraction yields (text with page offsets) and how it refuses a file (Unreadable, with the reason)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass


class Unreadable(ValueError):
    """A file that yields no text: the reason is reported (skipped), never dropped silently."""


@dataclass(frozen=True, slots=True)
class ExtractedText:
    text: str
    page_starts: tuple[int, ...] = ()  # character offset where each page begins (PDF), page n at index n - 1

    def pages_of(self, start: int, end: int) -> tuple[int, ...]:
        """1-based pages a span of `text` covers (empty when the format has no pages)."""
        if not self.page_starts:
            return ()
        first = max(1, bisect_right(self.page_starts, start))
        last = max(first, bisect_right(self.page_starts, max(start, end - 1)))
        return tuple(range(first, last + 1))

    def chunk_pages(self, contents: Sequence[str]) -> tuple[tuple[int, ...], ...]:
        """Each chunk's pages, found by locating the chunk in the text (chunks come in order, overlapping)."""
        if not self.page_starts:
            return ()
        out: list[tuple[int, ...]] = []
        position = 0
        for content in contents:
            found = self.text.find(content, position)
            if found < 0 and content.strip():  # a chunker that rewrites text (adds a heading line): its last line
                found = self.text.find(content.splitlines()[-1], position)
            out.append(self.pages_of(found, found + len(content)) if found >= 0 else ())
            position = max(position, found)
        return tuple(out)
