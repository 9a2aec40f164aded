"""Text handling of the embedded lexical legs: the analyzer and query terms."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import tantivy

from agentkb.models.query_text import MAX_QUERY_TERMS, query_words


@lru_cache(maxsize=1)
def analyzer() -> Any:
    """Words, lowercased, accents folded, Snowball English stems: FTS5's `porter unicode61` in tantivy."""
    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.ascii_fold())
            .filter(tantivy.Filter.stemmer("english")).build())


def query_terms(text: str) -> list[str]:
    """The analysed, de-duplicated terms of a query (stopwords dropped unless nothing else is left)."""
    terms: list[str] = []
    for word in query_words(text):
        terms.extend(analyzer().analyze(word))
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]
