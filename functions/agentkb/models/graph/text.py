"""Text and canonical form of the graph: shared by the stores (indexing, hashing) and the services (query terms)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from agentkb.models.graph.records import EntityRecord

_TOKEN = re.compile(r"[^\W_]+")
NAME_FIELD_WEIGHT = 2  # a term in the label, identity key or an alias counts double a term in an attribute
ATTRIBUTE_FIELD_WEIGHT = 1
MAX_QUERY_TERMS = 32


def normalise_text(text: str) -> str:
    """Lowercase with collapsed whitespace: how labels, keys, aliases and queries are compared for equality."""
    return " ".join(text.lower().split())


def tokenize(text: str) -> list[str]:
    """Lowercased alphanumeric runs (Unicode-aware); `billing-api/v2` -> [billing, api, v2]."""
    return _TOKEN.findall(text.lower())


def entity_terms(entity: EntityRecord) -> dict[str, int]:
    """Index terms of an entity with their field weight (the best field wins)."""
    terms: dict[str, int] = {}
    for value in _attribute_strings(entity.attributes):
        for term in tokenize(value):
            terms[term] = ATTRIBUTE_FIELD_WEIGHT
    for text in (entity.label, entity.identity_key, *entity.aliases):
        for term in tokenize(text):
            terms[term] = NAME_FIELD_WEIGHT
    return terms


def _attribute_strings(attributes: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for value in attributes.values():
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, str))
    return out


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, UTF-8 text (no ASCII escaping): the one canonical form we hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def identity_fingerprint(kind: str, project_id: str | None, key: str) -> str:
    """Default identity fingerprint: sha256 of kind, project and identity key."""
    return hashlib.sha256(f"{kind}\n{project_id or ''}\n{key}".encode()).hexdigest()
