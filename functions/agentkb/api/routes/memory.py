"""Routes of the ingest function for agent memory: write, list, get and forget (`/v1/memories`)."""

from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, NOT_OWNER, json_response, ok
from agentkb.api.route import Routes
from agentkb.composition import Ports, get_ports
from agentkb.models.bounds import MAX_WORKSPACE_ID
from agentkb.models.memory.api import MemoryGetResponse, MemoryListResponse, MemoryWriteRequest, MemoryWriteResponse
from agentkb.models.memory.detail import MemoryListQuery
from agentkb.paging import CURSOR_DESCRIPTION, CURSOR_PATTERN
from agentkb.services.memory.admin import decode_cursor, forget_memory, get_memory, list_memories
from agentkb.services.memory.service import MemoryDeps, write_memory

routes = Routes()


def memory_deps(ports: Annotated[Ports, Depends(get_ports)]) -> MemoryDeps:
    """The memory writer's ports (also the demo's)."""
    return MemoryDeps(ports.memories, ports.graph, ports.embedder)


@routes.write("POST", "/v1/memories", "writeMemory", summary="Write an agent memory (recallable when 201 returns)",
              responses={201: ok(MemoryWriteResponse, "Stored (a new revision when the name existed)"),
                         200: ok(MemoryWriteResponse, "Idempotent replay or unchanged rewrite: nothing new stored"),
                         409: ERRORS[400] | {"description": "Idempotency key reused with a different body"},
                         422: ERRORS[400] | {"description": "Refused by the secrets firewall (nothing stored)"},
                         **ERRORS, 403: NOT_OWNER})
def write_memory_route(request: Annotated[MemoryWriteRequest, Body()],
                       deps: Annotated[MemoryDeps, Depends(memory_deps)]) -> Response[Any]:
    outcome = write_memory(request, current_principal(), deps)
    return json_response(outcome.status, outcome.response)


Workspace = Annotated[str, Query(min_length=1, max_length=MAX_WORKSPACE_ID)]
Cursor = Annotated[str | None, Query(max_length=256, pattern=CURSOR_PATTERN, description=CURSOR_DESCRIPTION)]


@routes.read("GET", "/v1/memories", "listMemories", summary="List memories, newest first (filters, paging)",
             responses={200: ok(MemoryListResponse, "A page; nextCursor is null on the last"), **ERRORS})
def list_memories_route(workspace_id: Workspace, ports: Annotated[Ports, Depends(get_ports)],
                        project_id: Annotated[str | None, Query(max_length=256)] = None,
                        type: Annotated[str | None, Query(max_length=64)] = None,  # noqa: A002 - the API's name
                        status: Annotated[Literal["live", "superseded", "stale", "unconfirmed"] | None,
                                          Query()] = None,
                        limit: Annotated[int, Query(ge=1, le=200)] = 50,
                        cursor: Cursor = None) -> Response[Any]:
    query = MemoryListQuery(workspace_id, project_id=project_id, type=type, status=status, limit=limit,
                            before_id=decode_cursor(cursor))
    return json_response(200, list_memories(query, current_principal(), ports.memories))


@routes.read("GET", "/v1/memories/{memoryId}", "getMemory", summary="One memory, every field",
             responses={200: ok(MemoryGetResponse, "The memory"), **ERRORS})
def get_memory_route(memoryId: Annotated[str, Path()], workspace_id: Workspace,  # noqa: N803
                     ports: Annotated[Ports, Depends(get_ports)]) -> Response[Any]:
    return json_response(200, get_memory(workspace_id, memoryId, current_principal(), ports.memories))


@routes.write("DELETE", "/v1/memories/{memoryId}", "deleteMemory",
              summary="Forget a memory everywhere (every revision, indexes, entity links)",
              responses={204: {"description": "Forgotten"}, **ERRORS})
def delete_memory_route(memoryId: Annotated[str, Path()], workspace_id: Workspace,  # noqa: N803
                        ports: Annotated[Ports, Depends(get_ports)]) -> Response[Any]:
    forget_memory(workspace_id, memoryId, current_principal(), ports.memories)
    return Response(status_code=204, body="")
