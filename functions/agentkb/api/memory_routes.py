"""Routes of the ingest function for agent memory: `POST /v1/memories`."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, json_response, ok
from agentkb.composition import Ports, get_ports
from agentkb.models.memory import MemoryWriteRequest, MemoryWriteResponse
from agentkb.services.memory import MemoryDeps, write_memory

router = Router()


def memory_deps(ports: Annotated[Ports, Depends(get_ports)]) -> MemoryDeps:
    """The memory writer's ports (also the demo's)."""
    return MemoryDeps(ports.memories, ports.graph, ports.embedder)


@router.post("/v1/memories", operation_id="writeMemory", summary="Write an agent memory (recallable when 201 returns)",
             responses={201: ok(MemoryWriteResponse, "Stored (a new revision when the name existed)"),
                        200: ok(MemoryWriteResponse, "Idempotent replay or unchanged rewrite: nothing new stored"),
                        409: ERRORS[400] | {"description": "Idempotency key reused with a different body"},
                        422: ERRORS[400] | {"description": "Refused by the secrets firewall (nothing stored)"},
                        **ERRORS})
def write_memory_route(request: Annotated[MemoryWriteRequest, Body()],
                       deps: Annotated[MemoryDeps, Depends(memory_deps)]) -> Response[Any]:
    outcome = write_memory(request, current_principal(), deps)
    return json_response(outcome.status, outcome.body)
