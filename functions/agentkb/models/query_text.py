"""The one stopword list of lexical queries: the embedded FTS query and the DynamoDB term match drop the same words.

Engine-neutral and dependency-free (the AWS bundle has no numpy, so it cannot import the embedded index).
"""

from __future__ import annotations

STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with", "do", "does", "did",
    "can",
))
