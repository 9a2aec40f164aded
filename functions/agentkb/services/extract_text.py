"""What extraction yields (text with page offsets) and how it refuses a file (Unreadable, with the reason)."""

from __future__ import annotations

from bisect import bisect_right
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
