"""Recall over DynamoDB memory items, as pure functions: the eligibility rules (a FilterExpression and its Python
twin for re-checking index candidates), the lexical term-match score and the float32 cosine.

Shared by the DynamoDB-only store and the OpenSearch-indexed store; no I/O here.
"""

from __future__ import annotations

import math
import re
import struct
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb_tables import get_n, get_s, n, s
from agentkb.models.memory import VISIBILITY_RANK
from agentkb.models.recall import RecallScope

_WORD = re.compile(r"\w+")
_FIELD_WEIGHTS = (("name", 2.0), ("description", 1.5), ("body", 1.0))
MAX_QUERY_TERMS = 64
# sqlite_index.STOPWORDS, copied: that module imports numpy, absent from the AWS bundle (a test holds them equal)
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with", "do", "does", "did",
    "can",
))


def pack(vector: Sequence[float]) -> bytes:
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(blob) // 4}f", blob)


def query_terms(text: str) -> list[str]:
    """The embedded FTS query's terms: distinct lowercase words without stopwords (unless only stopwords)."""
    words = list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if w.strip("_")))
    return ([w for w in words if w not in STOPWORDS] or words)[:MAX_QUERY_TERMS]


def eligibility_filter(scope: RecallScope) -> tuple[str, dict[str, Any]]:
    """eligibility_sql's WHERE clause as a FilterExpression (an absent attribute behaves like SQL NULL)."""
    values: dict[str, Any] = {":aud": n(scope.audience_rank), ":vp": n(VISIBILITY_RANK["project"]),
                              ":vc": n(VISIBILITY_RANK["channel"]), ":vo": n(VISIBILITY_RANK["personal"]),
                              ":me": s(scope.principal_id)}
    audience = ["vis_rank > :vp", "(vis_rank = :vo AND owner_id = :me)"]
    if scope.project_id is not None:
        values[":project"] = s(scope.project_id)
        audience.append("(vis_rank = :vp AND project_id = :project)")
    if scope.channel_id is not None:
        values[":channel"] = s(scope.channel_id)
        audience.append("(vis_rank = :vc AND channel_id = :channel)")
    deny = 7 & ~scope.allowed_sensitivity
    allowed = [v for v in range(8) if v & deny == 0]
    values.update({f":s{v}": n(v) for v in allowed})
    clauses = ["vis_rank >= :aud", f"({' OR '.join(audience)})",
               f"sensitivity IN ({', '.join(f':s{v}' for v in allowed)})"]
    if scope.project_only:
        clauses.append("project_id = :project" if scope.project_id is not None else "attribute_not_exists(project_id)")
    if not scope.include_unconfirmed:
        clauses.append("confirmed = :one")
        values[":one"] = n(1)
    if not scope.include_stale:
        clauses.append("superseded = :zero AND stale = :zero AND (attribute_not_exists(valid_until)"
                       " OR valid_until > :now)")
        values.update({":zero": n(0), ":now": n(float(scope.now))})
    if scope.since is not None:
        clauses.append("updated_at >= :since")
        values[":since"] = n(float(scope.since))
    return " AND ".join(clauses), values


def is_eligible(item: dict[str, Any], scope: RecallScope) -> bool:
    """eligibility_filter evaluated on one item (the re-check of index candidates against DynamoDB truth)."""
    vis, project = get_n(item, "vis_rank"), get_s(item, "project_id")
    if vis < scope.audience_rank or get_n(item, "sensitivity") & (7 & ~scope.allowed_sensitivity):
        return False
    p_rank, c_rank, o_rank = (VISIBILITY_RANK[v] for v in ("project", "channel", "personal"))
    if not (vis > p_rank or (vis == o_rank and get_s(item, "owner_id") == scope.principal_id)
            or (scope.project_id is not None and vis == p_rank and project == scope.project_id)
            or (scope.channel_id is not None and vis == c_rank and get_s(item, "channel_id") == scope.channel_id)):
        return False
    if scope.project_only and project != scope.project_id:
        return False
    if not scope.include_unconfirmed and get_n(item, "confirmed") != 1:
        return False
    if not scope.include_stale and (get_n(item, "superseded") or get_n(item, "stale")
                                    or ("valid_until" in item and number(item, "valid_until") <= scope.now)):
        return False
    return scope.since is None or number(item, "updated_at") >= scope.since


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
                   lifted: Collection[int] = (), lift: float = 0.0) -> list[tuple[int, float]]:
    """(memory id, cosine) of the k best V# items, `lift` added to `lifted` ids for ranking; best first, then id."""
    query32 = float32(vector)
    scored = []
    for memory_id, item in items:
        sim = cosine32(item, query32)
        scored.append((-(sim + lift if memory_id in lifted else sim), memory_id, sim))
    scored.sort()
    return [(memory_id, sim) for _rank, memory_id, sim in scored[:max(k, 0)]]
