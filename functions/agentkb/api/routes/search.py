"""Routes of the search function: knowledge search and health."""

import json
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.api.context import add_response_header, current_principal
from agentkb.api.responses import ERRORS, json_model_response, ok
from agentkb.api.route import Routes
from agentkb.composition import Ports, get_ports
from agentkb.models.search import KnowledgeSearchRequest, KnowledgeSearchResponse
from agentkb.services.search.service import SearchDeps, search_knowledge

routes = Routes()


def search_deps(ports: Annotated[Ports, Depends(get_ports)]) -> SearchDeps:
    """The search service's ports (also the knowledge source of snapshots)."""
    return SearchDeps(ports.catalog, ports.index, ports.embedder, ports.reranker, ports.settings.default_search_mode,
                      embedders=ports.embedders)


@routes.read("POST", "/api/v2/knowledge/search", "searchKnowledge", summary="Search knowledge",
             responses={200: ok(KnowledgeSearchResponse, "Matching document chunks ordered by relevance.") | {
                 "headers": {"X-Search-Leg-Ranks": {"description": "Each result's rank in the BM25 and vector legs, "
                                                                   "in result order: a JSON array of {bm25, vector}, "
                                                                   "null where a leg did not return it",
                                                    "schema": {"type": "string"}},
                             "X-Search-Degraded": {"description": "Present when a leg could not run: why "
                                                                  "(vector_unavailable)",
                                                   "schema": {"type": "string"}}}},
                        409: ERRORS[400] | {"description": "Reranking refused: a candidate chunk carries a detected "
                                                           "secret (details.reason `secret_provenance`)"},
                        **ERRORS})
def search_knowledge_route(request: Annotated[KnowledgeSearchRequest, Body()],
                           deps: Annotated[SearchDeps, Depends(search_deps)]) -> Response[Any]:
    outcome = search_knowledge(request, current_principal(), deps)
    if outcome.degraded:
        add_response_header("X-Search-Degraded", outcome.degraded)
    # The upstream result object allows no extra field: each result's rank in each leg travels in a header
    add_response_header("X-Search-Leg-Ranks", json.dumps(outcome.leg_ranks(), separators=(",", ":")))
    return json_model_response(200, KnowledgeSearchResponse(data=outcome.data))


@routes.public("GET", "/health", "health", summary="Liveness")
def health(ports: Annotated[Ports, Depends(get_ports)]) -> dict[str, Any]:
    return {"status": "ok", "backend": ports.engine.name}
