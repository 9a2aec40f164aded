"""Graph routes: `POST /v1/graph/search` (search function) and `POST /v1/graph` (ingest function)."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.adapters.factory import get_container
from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, ok
from agentkb.errors import NotFound
from agentkb.models.graph import GraphSearchRequest, GraphSearchResponse, GraphWriteRequest, GraphWriteResponse
from agentkb.ports import GraphStore
from agentkb.services.graph_search import search_graph
from agentkb.services.graph_write import upsert_graph

search_router = Router()
ingest_router = Router()


def graph_store() -> GraphStore:
    """The container's graph store when it has one, else the embedded store over the container's database."""
    container = get_container()
    store = getattr(container, "graph", None)
    return store if store is not None else _embedded_store(container.db)


@lru_cache(maxsize=4)
def _embedded_store(db: Any) -> GraphStore:
    from agentkb.adapters.sqlite_graph import SqliteGraphStore

    return SqliteGraphStore(db)


def _require_workspace(workspace_id: str) -> None:
    if not current_principal().can_reach(workspace_id):
        raise NotFound("Workspace not found")


def _json(status: int, body: dict[str, Any]) -> Response[Any]:
    # Compact, insertion-ordered JSON: the same request on the same graph answers the same bytes.
    return Response(status_code=status, content_type="application/json",
                    body=json.dumps(body, ensure_ascii=False, separators=(",", ":")))


@search_router.post("/v1/graph/search", operation_id="searchGraph", summary="Search the knowledge graph",
                    responses={200: ok(GraphSearchResponse, "Bounded, proof-carrying graph search result."),
                               **ERRORS})
def search_graph_route(request: Annotated[GraphSearchRequest, Body()]) -> Any:  # a Response: see _json
    _require_workspace(request.workspaceId)
    return _json(200, search_graph(graph_store(), request))


@ingest_router.post("/v1/graph", operation_id="upsertGraph", summary="Upsert graph entities, relations, proofs",
                    responses={200: ok(GraphWriteResponse, "Counts and the new graph source hash."), **ERRORS})
def upsert_graph_route(request: Annotated[GraphWriteRequest, Body()]) -> Any:  # a Response: see _json
    _require_workspace(request.workspaceId)
    return _json(200, upsert_graph(graph_store(), request))
