"""The OB1 Agent Memory API under `/ob1` (ingest function: every route may write, if only a recall trace).

A client configured with the endpoint `<base>/ob1` works unchanged: the key may come as `x-brain-key` or `?key=`
(the gate), requests are accepted as OB1's server accepts them, answers have OB1's shapes. Services: ob1_*.py.
"""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query

from agentkb.api.context import add_response_header, current_principal
from agentkb.api.responses import ERRORS, NOT_OWNER, json_response, ok
from agentkb.api.route import Routes
from agentkb.composition import Ports, get_ports
from agentkb.models.bounds import MAX_WORKSPACE_ID
from agentkb.models.ob1.api import (
    Ob1ListFilter,
    Ob1RecallRequest,
    Ob1ReviewRequest,
    Ob1UsageReport,
    Ob1WritebackRequest,
)
from agentkb.models.ob1.responses import (
    Ob1Health,
    Ob1MemoryAnswer,
    Ob1MemoryList,
    Ob1RecallResponse,
    Ob1TraceAnswer,
    Ob1UsageAnswer,
    Ob1WritebackResponse,
)
from agentkb.services.memory.service import MemoryDeps
from agentkb.services.ob1.memory import inspect_memory
from agentkb.services.ob1.recall import Ob1RecallDeps, ob1_recall
from agentkb.services.ob1.review import ReviewDeps, get_trace, list_ob1, reachable, report_usage, review
from agentkb.services.ob1.writeback import writeback

routes = Routes()
SERVICE, VERSION = "agentkb-agent-memory", "0.1.0"  # the OB1 interface version this surface implements
UNSAFE = {422: {"description": "Unsafe write-back blocked: `error` is that string, `unsafe` lists every reason"}}


PortsDep = Annotated[Ports, Depends(get_ports)]


def review_deps(ports: PortsDep) -> ReviewDeps:
    return ReviewDeps(writeback_deps(ports), ports.traces)


def recall_deps(ports: PortsDep) -> Ob1RecallDeps:
    return Ob1RecallDeps(ports.memories, ports.graph, ports.embedder, ports.tokenizer, ports.traces,
                         embed_timeout_s=ports.settings.embed_timeout_ms / 1000)


def writeback_deps(ports: PortsDep) -> MemoryDeps:
    """A write-back is a batch of memory writes: the memory writer's ports."""
    return MemoryDeps(ports.memories, ports.graph, ports.embedder)


ReviewDep = Annotated[ReviewDeps, Depends(review_deps)]
WorkspaceQuery = Annotated[str | None, Query(max_length=MAX_WORKSPACE_ID)]
# OB1's server answers 400 without a workspace_id on its two list routes; an empty value counts as none (the gate)
RequiredWorkspace = Annotated[str, Query(min_length=1, max_length=MAX_WORKSPACE_ID)]
Filter = Annotated[str | None, Query(max_length=512, description="An empty value is no filter, as on OB1's server")]
Limit = Annotated[int, Query(description="Clamped to 1..200, as on OB1's server")]


@routes.read("GET", "/ob1/health", "ob1Health", summary="OB1: verify the endpoint and key",
             responses={200: ok(Ob1Health, "Reachable, and the key works"), **ERRORS})
def health_route() -> Response[Any]:
    return json_response(200, {"ok": True, "service": SERVICE, "version": VERSION})


@routes.read("POST", "/ob1/recall", "ob1Recall", summary="OB1: scoped memories for a task, with use policy",
             responses={200: ok(Ob1RecallResponse, "Eligible memories, best first; traced"), **ERRORS})
def recall_route(request: Annotated[Ob1RecallRequest, Body()],
                 deps: Annotated[Ob1RecallDeps, Depends(recall_deps)]) -> Response[Any]:
    outcome = ob1_recall(request, current_principal(), deps)
    if outcome.degraded_code:
        add_response_header("X-Recall-Degraded", outcome.degraded_code)
    return json_response(200, outcome.response)


@routes.write("POST", "/ob1/writeback", "ob1Writeback", summary="OB1: store compact memory after a task",
              responses={200: ok(Ob1WritebackResponse, "Stored, or the first answer of the key"), **UNSAFE,
                         **ERRORS})
def writeback_route(request: Annotated[Ob1WritebackRequest, Body()],
                    deps: Annotated[MemoryDeps, Depends(writeback_deps)]) -> Response[Any]:
    return json_response(200, writeback(request, current_principal(), deps))


@routes.write("POST", "/ob1/recall/{request_id}/usage", "ob1ReportUsage",
              summary="OB1: report which recalled memories were used or ignored",
              responses={200: ok(Ob1UsageAnswer, "Recorded in the trace"), **ERRORS})
def usage_route(request_id: Annotated[str, Path()], report: Annotated[Ob1UsageReport, Body()],
                deps: ReviewDep) -> Response[Any]:
    return json_response(200, report_usage(request_id, report, current_principal(), deps))


@routes.read("GET", "/ob1/memories", "ob1ListMemories", summary="OB1: list memories by workspace and filters",
             responses={200: ok(Ob1MemoryList, "Newest first"), **ERRORS})
def list_route(ports: PortsDep, workspace_id: RequiredWorkspace, project_id: Filter = None,
               review_status: Filter = None, lifecycle_status: Filter = None, runtime_name: Filter = None,
               memory_type: Filter = None, task_id_prefix: Filter = None, limit: Limit = 50) -> Response[Any]:
    filters = Ob1ListFilter(workspace_id=workspace_id, project_id=project_id, review_status=review_status,
                            lifecycle_status=lifecycle_status, runtime_name=runtime_name, memory_type=memory_type,
                            task_id_prefix=task_id_prefix, limit=limit)
    return json_response(200, list_ob1(filters, current_principal(), ports.memories))


@routes.read("POST", "/ob1/memories/list", "ob1ListMemoriesByBody",
             summary="OB1: the memory list with its filters in a JSON body (the Hermes plugin's call)",
             responses={200: ok(Ob1MemoryList, "Newest first"), **ERRORS})
def list_by_body_route(filters: Annotated[Ob1ListFilter, Body()], ports: PortsDep) -> Response[Any]:
    return json_response(200, list_ob1(filters, current_principal(), ports.memories))


# Before /ob1/memories/{memory_id}, whose pattern matches this path too: the gate takes the first match.
@routes.read("GET", "/ob1/memories/review", "ob1ReviewQueue", summary="OB1: pending agent-written memories",
             responses={200: ok(Ob1MemoryList, "Pending review, newest first"), **ERRORS})
def review_queue_route(ports: PortsDep, workspace_id: RequiredWorkspace, project_id: Filter = None,
                       ) -> Response[Any]:
    filters = Ob1ListFilter(workspace_id=workspace_id, project_id=project_id)
    return json_response(200, list_ob1(filters, current_principal(), ports.memories, pending_only=True))


@routes.read("POST", "/ob1/memories/review", "ob1ReviewQueueByBody",
             summary="OB1: the review queue with its filters in a JSON body (the Hermes plugin's call)",
             responses={200: ok(Ob1MemoryList, "Pending review, newest first"), **ERRORS})
def review_queue_by_body_route(filters: Annotated[Ob1ListFilter, Body()], ports: PortsDep) -> Response[Any]:
    return json_response(200, list_ob1(filters, current_principal(), ports.memories, pending_only=True))


@routes.read("GET", "/ob1/memories/{memory_id}", "ob1GetMemory",
             summary="OB1: one memory with source, provenance, artifacts and review history",
             responses={200: ok(Ob1MemoryAnswer, "The memory"), **ERRORS})
def get_route(memory_id: Annotated[str, Path()], ports: PortsDep, workspace_id: WorkspaceQuery = None,
              ) -> Response[Any]:
    found = reachable(ports.memories, current_principal(), workspace_id, memory_id)
    return json_response(200, {"memory": inspect_memory(found)})


@routes.write("PATCH", "/ob1/memories/{memory_id}/review", "ob1ReviewMemory",
              summary="OB1: confirm, edit, reject, restrict, stale, dispute or supersede",
              responses={200: ok(Ob1MemoryAnswer, "The memory after the action"), **ERRORS, 403: NOT_OWNER})
def review_route(memory_id: Annotated[str, Path()], request: Annotated[Ob1ReviewRequest, Body()],
                 deps: ReviewDep) -> Response[Any]:
    return json_response(200, review(memory_id, request, current_principal(), deps))


@routes.read("GET", "/ob1/recall-traces/{request_id}", "ob1GetRecallTrace",
             summary="OB1: what a recall scored, returned and how it was used",
             responses={200: ok(Ob1TraceAnswer, "The trace and its items"), **ERRORS})
def trace_route(request_id: Annotated[str, Path()], deps: ReviewDep) -> Response[Any]:
    return json_response(200, get_trace(request_id, current_principal(), deps))
