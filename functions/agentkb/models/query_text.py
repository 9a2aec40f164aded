"""The words of a lexical memory query, written once: the embedded FTS and tantivy queries and the DynamoDB term
match take the same words and drop the same stopwords.

Engine-neutral and dependency-free (the AWS bundle has no numpy, so it cannot import the embedded index).
"""

from __future__ import annotations

import re

MAX_QUERY_TERMS = 64  # terms a lexical leg queries with (the rest of a long query is dropped)
_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with", "do", "does", "did",
    "can",
))


def query_words(text: str) -> list[str]:
    """Distinct lowercase words in first-seen order, stopwords dropped unless nothing else is left (uncapped)."""
    words = list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if w.strip("_")))
    return [w for w in words if w not in STOPWORDS] or words
