"""Recall over DynamoDB memory items, as pure functions: the compiled eligibility predicate (models/eligibility.py)
translated to a FilterExpression and evaluated on items (re-checking index candidates), the lexical term-match
score and the float32 cosine.

Shared by the DynamoDB-only store and the OpenSearch-indexed store; no I/O here.
"""

from __future__ import annotations

import math
import re
import struct
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.tables import get_s, n, s
from agentkb.models.eligibility import (
    NUMBER_FACETS,
    STRING_FACETS,
    Clause,
    compile_eligibility,
    evaluate,
    translate,
)
from agentkb.models.query_text import MAX_QUERY_TERMS, query_words
from agentkb.models.recall.api import RecallScope

_WORD = re.compile(r"\w+")
_FIELD_WEIGHTS = (("name", 2.0), ("description", 1.5), ("body", 1.0))


def pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(blob) // 4}f", blob)


def query_terms(text: str) -> list[str]:
    """The embedded FTS query's terms: distinct lowercase words without stopwords (unless only stopwords)."""
    return query_words(text)[:MAX_QUERY_TERMS]


class _FilterWords:
    """The predicate as FilterExpression text; values become `:eN` placeholders collected in `values`."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def _placeholder(self, value: str | int | float) -> str:
        name = f":e{len(self.values)}"
        self.values[name] = s(value) if isinstance(value, str) else n(value)
        return name

    def all_of(self, parts: list[str]) -> str:
        return "(" + " AND ".join(parts) + ")"

    def any_of(self, parts: list[str]) -> str:
        return "(" + " OR ".join(parts) + ")"

    def absent(self, field: str) -> str:
        return f"attribute_not_exists({field})"

    def one_of(self, field: str, values: tuple[int, ...]) -> str:
        if not values:  # an empty IN list is invalid DynamoDB syntax: nothing may match
            return "attribute_not_exists(pk)"
        return f"{field} IN ({', '.join(self._placeholder(v) for v in values)})"

    def eq(self, field: str, value: str | int) -> str:
        return f"{field} = {self._placeholder(value)}"

    def above(self, field: str, value: float, inclusive: bool) -> str:
        return f"{field} {'>=' if inclusive else '>'} {self._placeholder(float(value))}"


def filter_expression(clause: Clause) -> tuple[str, dict[str, Any]]:
    """A predicate as FilterExpression text and its `:eN` values (an absent attribute behaves like SQL NULL)."""
    words = _FilterWords()
    return translate(clause, words), words.values


def eligibility_filter(scope: RecallScope) -> tuple[str, dict[str, Any]]:
    """The compiled eligibility predicate as a FilterExpression."""
    return filter_expression(compile_eligibility(scope))


def item_facets(item: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB memory item's eligibility facets (absent attributes stay absent)."""
    out: dict[str, Any] = {}
    for name in STRING_FACETS:
        if name in item:
            out[name] = get_s(item, name)
    for name in NUMBER_FACETS:
        if name in item:
            out[name] = number(item, name)
    return out


def is_eligible(item: dict[str, Any], scope: RecallScope) -> bool:
    """The compiled predicate on one item (the re-check of index candidates against DynamoDB truth)."""
    return evaluate(compile_eligibility(scope), item_facets(item))


def number(item: dict[str, Any], name: str) -> float:
    """A numeric attribute of a DynamoDB item."""
    return float(item[name]["N"])


def term_match(docs: Sequence[tuple[int, dict[str, Any]]], terms: Sequence[str]) -> list[tuple[int, float]]:
    """The lexical score of M# items: idf (over `docs`) x weighted tf in name/description/body; > 0, best first."""
    counted = [(memory_id, [Counter(_WORD.findall((get_s(item, f) or "").lower())) for f, _w in _FIELD_WEIGHTS])
               for memory_id, item in docs]
    total = len(counted)
    df = {t: sum(1 for _i, fields in counted if any(t in f for f in fields)) for t in terms}
    scored: list[tuple[float, int]] = []
    for memory_id, fields in counted:
        score = sum(math.log(1 + (total - df[t] + 0.5) / (df[t] + 0.5))
                    * sum(w * f[t] for f, (_name, w) in zip(fields, _FIELD_WEIGHTS, strict=True))
                    for t in terms if df[t])
        if score > 0:
            scored.append((-score, memory_id))
    scored.sort()
    return [(memory_id, -neg) for neg, memory_id in scored]


def float32(vector: Sequence[float]) -> tuple[float, ...]:
    """A query vector rounded to float32, like the stored ones (round it once per recall, not per item)."""
    return unpack(pack(vector))


def cosine32(item: dict[str, Any], query32: Sequence[float]) -> float:
    """Dot product of a V# item's stored float32 vector with a `float32` query (both L2-normalised)."""
    return math.fsum(a * b for a, b in zip(unpack(bytes(item["embedding"]["B"])), query32, strict=False))


def rank_by_cosine(items: Iterable[tuple[int, dict[str, Any]]], vector: Sequence[float], k: int,
                   boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
    """(memory id, cosine) of the k best V# items, `boosts` added for ranking only; best first, then id."""
    query32 = float32(vector)
    boosts = boosts or {}
    scored = []
    for memory_id, item in items:
        sim = cosine32(item, query32)
        scored.append((-(sim + boosts.get(memory_id, 0.0)), memory_id, sim))
    scored.sort()
    return [(memory_id, sim) for _rank, memory_id, sim in scored[:max(k, 0)]]
