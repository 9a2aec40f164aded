"""Graph routes: `POST /v1/graph/search` (search function) and `POST /v1/graph` (ingest function)."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, json_response, ok
from agentkb.api.route import Routes
from agentkb.composition import Ports, get_ports
from agentkb.errors import NotFound
from agentkb.models.graph.api import GraphSearchRequest, GraphSearchResponse, GraphWriteRequest, GraphWriteResponse
from agentkb.services.graph.search import search_graph
from agentkb.services.graph.write import upsert_graph

search_routes = Routes()
ingest_routes = Routes()


def _require_workspace(workspace_id: str) -> None:
    if not current_principal().can_reach(workspace_id):
        raise NotFound("Workspace not found")


@search_routes.read("POST", "/v1/graph/search", "searchGraph", summary="Search the knowledge graph",
                    responses={200: ok(GraphSearchResponse, "Bounded, proof-carrying graph search result."),
                               **ERRORS})
def search_graph_route(request: Annotated[GraphSearchRequest, Body()],
                       ports: Annotated[Ports, Depends(get_ports)]) -> Any:  # a Response: see json_response
    _require_workspace(request.workspaceId)
    return json_response(200, search_graph(ports.graph, request))


@ingest_routes.write("POST", "/v1/graph", "upsertGraph", summary="Upsert graph entities, relations, proofs",
                     responses={200: ok(GraphWriteResponse, "Counts and the new graph source hash."),
                                409: ERRORS[400] | {"description": "An entity of the same kind and identity key "
                                                                   "already exists under another id"},
                                **ERRORS})
def upsert_graph_route(request: Annotated[GraphWriteRequest, Body()],
                       ports: Annotated[Ports, Depends(get_ports)]) -> Any:  # a Response: see json_response
    _require_workspace(request.workspaceId)
    return json_response(200, upsert_graph(ports.graph, request))
