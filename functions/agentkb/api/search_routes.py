"""Routes of the search function: knowledge search, health and the OpenAPI document."""


from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.adapters.factory import get_container
from agentkb.api.context import add_response_header, current_principal
from agentkb.api.responses import ERRORS, json_model_response, ok
from agentkb.models.search import KnowledgeSearchRequest, KnowledgeSearchResponse
from agentkb.services.search import SearchDeps, search_knowledge

router = Router()


def search_deps() -> SearchDeps:
    c = get_container()
    return SearchDeps(c.catalog, c.index, c.embedder, c.reranker, c.settings.default_search_mode)


@router.post("/api/v2/knowledge/search", operation_id="searchKnowledge", summary="Search knowledge",
             responses={200: ok(KnowledgeSearchResponse, "Matching document chunks ordered by relevance."), **ERRORS})
def search_knowledge_route(request: Annotated[KnowledgeSearchRequest, Body()]) -> Response[Any]:
    outcome = search_knowledge(request, current_principal(), search_deps())
    if outcome.degraded:
        add_response_header("X-Search-Degraded", outcome.degraded)
    return json_model_response(200, KnowledgeSearchResponse(data=outcome.data))


@router.get("/health", operation_id="health", summary="Liveness")
def health() -> dict[str, Any]:
    settings = get_container().settings
    return {"status": "ok", "backend": settings.backend}


@router.get("/openapi.json", operation_id="openapi", summary="The OpenAPI 3 document of every route")
def openapi() -> dict[str, Any]:
    from agentkb.api.openapi import openapi_document

    return openapi_document()
