"""Routes of the recall function: `POST /v1/recall`."""

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from agentkb.api.context import add_response_header, current_principal
from agentkb.api.responses import ERRORS, json_response, ok
from agentkb.api.route import Routes
from agentkb.composition import Ports, get_ports
from agentkb.models.recall.api import RecallRequest, RecallResponse
from agentkb.services.recall.service import RecallDeps, RecallOptions, recall
from agentkb.services.recall.usage_feedback import feedback_reader

routes = Routes()


def recall_deps(ports: Annotated[Ports, Depends(get_ports)]) -> RecallDeps:
    """The recall service's ports (also the memory source of snapshots)."""
    return RecallDeps(ports.memories, ports.graph, ports.embedder, ports.tokenizer,
                      embed_timeout_s=ports.settings.embed_timeout_ms / 1000, backend=ports.engine.embeddings,
                      feedback=feedback_reader(ports.traces))


@routes.read("POST", "/v1/recall", "recall", summary="Recall agent memories (vector + graph, token-budgeted)",
             responses={200: ok(RecallResponse, "Direct (vector or FTS fallback) and graph matches."), **ERRORS})
def recall_route(request: Annotated[RecallRequest, Body()], deps: Annotated[RecallDeps, Depends(recall_deps)],
                 fallback: Annotated[Literal["fts_only"] | None, Query(description="fts_only: lexical recall")] = None,
                 fail_on_degraded: Annotated[bool, Query(alias="failOnDegraded",
                                                         description="503 instead of an FTS fallback")] = False,
                 ) -> Response[Any]:
    options = RecallOptions(fallback_fts_only=fallback == "fts_only", fail_on_degraded=fail_on_degraded)
    outcome = recall(request, current_principal(), deps, options)
    if outcome.degraded_code:
        add_response_header("X-Recall-Degraded", outcome.degraded_code)
    return json_response(200, outcome.response)
