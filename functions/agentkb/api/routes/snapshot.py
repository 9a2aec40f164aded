"""Routes of the snapshot function: `POST /v1/snapshots` (build or replay) and `GET /v1/snapshots/{snapshotId}`."""

import dataclasses
import re
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.api.context import current_principal, invocation_deadline
from agentkb.api.responses import ERRORS, ok
from agentkb.api.route import Routes
from agentkb.api.routes.search import search_deps
from agentkb.composition import Ports, get_ports
from agentkb.errors import NotFound
from agentkb.models.domain import Principal
from agentkb.models.snapshot import (
    UUID_PATTERN,
    Candidate,
    ContextSnapshotOut,
    CreateSnapshotRequest,
    MemorySource,
    ScopeIn,
)
from agentkb.ports.invocation import RemainingTime
from agentkb.services.snapshot.service import SnapshotDeps, create_snapshot, get_snapshot
from agentkb.services.snapshot.sources import MemoizedEmbedder, MemoryRetriever, SourceDeps

routes = Routes()
_UUID = re.compile(UUID_PATTERN)


def snapshot_deps(ports: Annotated[Ports, Depends(get_ports)],
                  deadline: Annotated[RemainingTime | None, Depends(invocation_deadline)] = None) -> SnapshotDeps:
    """The snapshot service's ports; `deadline` is the invocation's (in-progress idempotency claims lapse with it)."""
    search = search_deps(ports)
    embedder = MemoizedEmbedder(search.embedder)  # per request: knowledge and memory share the query vector
    memory = _memory_source(ports, embedder)
    sources = SourceDeps(dataclasses.replace(search, embedder=embedder), ports.graph, ports.snapshots, memory)
    return SnapshotDeps(sources, ports.tokenizer, ports.idempotency, deadline=deadline)


def _memory_source(ports: Ports, embedder: MemoizedEmbedder) -> MemoryRetriever:
    """The memory source, built when a snapshot asks for memories: the recall routes, models and memory store
    (~70 ms of CPU on a cold start, bench/coldstart/run.py --first-response) are not loaded for snapshots without
    one."""

    def retrieve(scope: ScopeIn, principal: Principal, source: MemorySource) -> list[Candidate]:
        from agentkb.api.routes.recall import recall_deps
        from agentkb.services.snapshot.memory_source import memory_retriever

        return memory_retriever(dataclasses.replace(recall_deps(ports), embedder=embedder))(scope, principal, source)

    return retrieve


def _raw(status: int, body: bytes) -> Response[Any]:
    # The stored bytes, untouched: GET answers byte-for-byte what the POST answered.
    return Response(status_code=status, content_type="application/json", body=body.decode("utf-8"))


@routes.write("POST", "/v1/snapshots", "createSnapshot", summary="Build the context snapshot of an attempt",
              responses={201: ok(ContextSnapshotOut, "Built"),
                         200: ok(ContextSnapshotOut, "Already built for this runId + attemptId (same body)"),
                         409: ERRORS[400] | {"description": "Same runId + attemptId with a different request"},
                         **ERRORS,
                         503: ERRORS[503] | {"description": "Same runId + attemptId still being built by another "
                                             "request (Retry-After), or a dependency is unavailable"}})
def create_snapshot_route(request: Annotated[CreateSnapshotRequest, Body()],
                          deps: Annotated[SnapshotDeps, Depends(snapshot_deps)]) -> Response[Any]:
    outcome = create_snapshot(request, current_principal(), deps)
    return _raw(outcome.status, outcome.body)


@routes.read("GET", "/v1/snapshots/{snapshotId}", "getSnapshot", summary="A stored context snapshot",
             responses={200: ok(ContextSnapshotOut, "The snapshot, byte-for-byte as built"), **ERRORS})
def get_snapshot_route(snapshotId: str, deps: Annotated[SnapshotDeps, Depends(snapshot_deps)]) -> Response[Any]:
    if not _UUID.match(snapshotId):
        raise NotFound("Snapshot not found")
    return _raw(200, get_snapshot(snapshotId, current_principal(), deps))
