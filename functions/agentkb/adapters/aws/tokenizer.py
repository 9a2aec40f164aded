"""An approximate tokenizer for the AWS bundle (no `tokenizers` package, no vocabulary file).

Titan v2 uses a BPE vocabulary we do not ship. We approximate it: every punctuation mark is a token, and every
word is split into pieces of at most PIECE_CHARS characters (BPE averages ~4-6 characters per English token).
For English prose the count lands within ~25% of the model's own, which is what chunking (200-token windows,
far below Titan's 8k limit) and snapshot token budgets need. Pieces of one word are adjacent spans, so the
chunker's "never split a word" rule still works.
"""

from __future__ import annotations

import re

PIECE_CHARS = 6
_TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class ApproximateTokenizer:
    """Tokenizer port: regex words + punctuation, long words cut into adjacent pieces."""

    def spans(self, text: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for match in _TOKEN.finditer(text):
            start, end = match.span()
            out.extend((i, min(i + PIECE_CHARS, end)) for i in range(start, end, PIECE_CHARS))
        return out

    def count(self, text: str) -> int:
        return len(self.spans(text))
