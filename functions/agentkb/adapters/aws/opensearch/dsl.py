"""OpenSearch DSL of the document index: index names and mapping, tag filters as bool clauses, plain cosine."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.opensearch.documents import SLOT_TYPES
from agentkb.adapters.aws.opensearch.ops import knn_method
from agentkb.models.domain import TAG_SLOTS, CompiledTagFilter, EmbeddingProfile


def index_name(prefix: str, profile: EmbeddingProfile) -> str:
    """A legal, stable index name per embedding profile (lowercase, no ':' '@' '/')."""
    return f"{prefix}-" + re.sub(r"[^a-z0-9._-]+", "-", profile.key.lower()).strip("-")


def index_body(profile: EmbeddingProfile, generation: str) -> dict[str, Any]:
    """Settings + mapping of a profile's index: cosine kNN, english BM25 text, keyword scope, typed tag slots."""
    properties: dict[str, Any] = {
        "embedding": {"type": "knn_vector", "dimension": profile.dimension, "method": knn_method(generation)},
        "content": {"type": "text", "analyzer": "english"},
        "context": {"type": "text", "analyzer": "english"},  # the title and headings above the chunk
        **{name: {"type": "keyword"} for name in ("workspace_id", "knowledge_base_id", "document_id", "chunk_id",
                                                  "document_name", "content_hash")},
        "source_url": {"type": "keyword", "index": False},
        "chunk_index": {"type": "integer"}, "token_count": {"type": "integer"}, "revision": {"type": "integer"},
        "tags": {"type": "object", "enabled": False},  # stored in _source for the results' metadata
        "secret": {"type": "boolean"},  # the secret detector found a credential in the chunk (issue 23)
    }
    for kind, count in TAG_SLOTS.items():
        properties.update({f"{kind}{i}": {"type": SLOT_TYPES[kind]} for i in range(1, count + 1)})
    return {"settings": {"index": {"knn": True}}, "mappings": {"properties": properties}}


def _wildcard(value: str, where: str) -> str:
    escaped = re.sub(r"([\\*?])", r"\\\1", value)
    return {"contains": f"*{escaped}*", "starts_with": f"{escaped}*", "ends_with": f"*{escaped}"}[where]


def compile_dsl_filters(filters: Sequence[CompiledTagFilter]) -> list[dict[str, Any]]:
    """Engine-neutral filters -> bool/filter clauses with compile_sql_filters' semantics (AND-ed)."""
    clauses: list[dict[str, Any]] = []
    for f in filters:
        field, op, value = f.slot, f.operator, f.value
        if op in ("contains", "starts_with", "ends_with"):
            clauses.append({"wildcard": {field: {"value": _wildcard(str(value), op), "case_insensitive": True}}})
        elif op == "not_contains":  # like SQL: NULL never matches, so the field must exist
            clauses.append({"bool": {"filter": [{"exists": {"field": field}}], "must_not": [
                {"wildcard": {field: {"value": _wildcard(str(value), "contains"), "case_insensitive": True}}}]}})
        elif op == "neq":
            clauses.append({"bool": {"filter": [{"exists": {"field": field}}],
                                     "must_not": [{"term": {field: value}}]}})
        elif op == "eq":
            clauses.append({"term": {field: value}})
        elif op == "between":
            clauses.append({"range": {field: {"gte": value, "lte": f.value_to}}})
        else:
            clauses.append({"range": {field: {op: value}}})
    return clauses


def scope(workspace_id: str, kb_id: str, filters: Sequence[CompiledTagFilter]) -> list[dict[str, Any]]:
    return [{"term": {"workspace_id": workspace_id}}, {"term": {"knowledge_base_id": kb_id}},
            *compile_dsl_filters(filters)]


def clean_metadata(tags: Any) -> dict[str, Any]:
    if not isinstance(tags, dict):
        return {}
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in tags.items()}


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Plain-Python cosine (no numpy in the AWS bundle); vectors are L2-normalised but we do not rely on it."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
