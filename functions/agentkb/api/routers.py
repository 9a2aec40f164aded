"""Which routes each function serves (the one place a route's owning function is named), and the OpenAPI
document of them all (`GET /openapi.json`).

The document is assembled on resolvers of its own, over copies of the routers: serving it never builds the
function apps (so it needs no re-entrant lock), and each function imports only its own route modules.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from agentkb.api.openapi_params import document_query_parameters
from agentkb.api.route import Routes, build_resolver

routes = Routes()  # the OpenAPI document's own route, served by the search function


def _search() -> list[Routes]:
    from agentkb.api.routes import graph as graph_routes
    from agentkb.api.routes import search as search_routes

    return [search_routes.routes, graph_routes.search_routes, routes]


def _ingest() -> list[Routes]:
    # The OB1 routes too: every one may write (a recall writes its trace), so the write-path function serves them
    # with the grants it has (memory, graph, memory index, Bedrock): no new role.
    from agentkb.api.routes import graph as graph_routes
    from agentkb.api.routes import ingest as ingest_routes
    from agentkb.api.routes import knowledge as knowledge_routes
    from agentkb.api.routes import memory as memory_routes
    from agentkb.api.routes import ob1 as ob1_routes
    from agentkb.api.routes import principals as principal_routes

    return [ingest_routes.routes, knowledge_routes.routes, memory_routes.routes, graph_routes.ingest_routes,
            ob1_routes.routes, principal_routes.routes]


def _recall() -> list[Routes]:
    from agentkb.api.routes import recall as recall_routes

    return [recall_routes.routes]


def _snapshot() -> list[Routes]:
    from agentkb.api.routes import snapshot as snapshot_routes

    return [snapshot_routes.routes]


FUNCTION_ROUTES: dict[str, Callable[[], list[Routes]]] = {
    "search": _search, "ingest": _ingest, "recall": _recall, "snapshot": _snapshot}


def function_openapi(function: str) -> dict[str, Any]:
    """The OpenAPI document of one function's routes."""
    resolver = build_resolver(APIGatewayRestResolver, FUNCTION_ROUTES[function]())
    document: dict[str, Any] = json.loads(resolver.get_openapi_json_schema(title="agentkb", version="1.0.0"))
    return document


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    """Every function's routes in one OpenAPI 3 document, with the API-key and bearer-token security schemes."""
    merged: dict[str, Any] = {}
    for function in FUNCTION_ROUTES:
        doc = function_openapi(function)
        if not merged:
            merged = {**doc, "paths": {}, "components": {"schemas": {}}}
        for path, item in doc.get("paths", {}).items():
            merged["paths"].setdefault(path, {}).update(item)
        merged["components"]["schemas"].update(doc.get("components", {}).get("schemas", {}))
    _no_content_on_204(merged)
    document_query_parameters(merged)
    merged["info"] = {"title": "agentkb", "version": "1.0.0",
                      "description": "Knowledge search, memory recall, graph search and context snapshots."}
    merged["components"]["securitySchemes"] = {
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        "oauthBearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                        "description": "An OAuth 2.0 access token of the issuer in AGENTKB_OIDC_ISSUER (scopes "
                                       "api:read, api:write), when one is configured."}}
    merged["security"] = [{"apiKey": []}, {"oauthBearer": []}]
    return merged


def _no_content_on_204(document: dict[str, Any]) -> None:
    """A 204 has no body, but Powertools documents the route's return annotation under every status: a client
    (and the fuzzer's response-schema check) would then expect JSON from every DELETE."""
    for item in document.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict):
                (operation.get("responses") or {}).get("204", {}).pop("content", None)


@routes.public("GET", "/openapi.json", "openapi", summary="The OpenAPI 3 document of every route")
def openapi() -> dict[str, Any]:
    return openapi_document()
