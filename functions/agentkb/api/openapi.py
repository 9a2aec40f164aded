"""The OpenAPI document of every route, merged from the four functions' resolvers."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    from agentkb.api.functions import APPS

    merged: dict[str, Any] = {}
    for name in ("search", "ingest", "recall", "snapshot"):
        doc = APPS[name]().openapi()
        if not merged:
            merged = doc
            merged.setdefault("paths", {})
            merged.setdefault("components", {}).setdefault("schemas", {})
            continue
        for path, item in doc.get("paths", {}).items():
            merged["paths"].setdefault(path, {}).update(item)
        merged["components"]["schemas"].update(doc.get("components", {}).get("schemas", {}))
    merged["info"] = {"title": "agentkb", "version": "1.0.0",
                      "description": "Knowledge search, memory recall, graph search and context snapshots."}
    merged.setdefault("components", {})["securitySchemes"] = {
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"}}
    merged["security"] = [{"apiKey": []}]
    return merged
