"""Routes of the snapshot function: `POST /v1/snapshots` (build or replay) and `GET /v1/snapshots/{snapshotId}`."""

from __future__ import annotations

import dataclasses
import re
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.adapters.factory import get_container
from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, ok
from agentkb.api.search_routes import search_deps
from agentkb.errors import NotFound
from agentkb.models.snapshot import UUID_PATTERN, ContextSnapshotOut, CreateSnapshotRequest
from agentkb.ports import RemainingTime
from agentkb.services.snapshot import SnapshotDeps, create_snapshot, get_snapshot
from agentkb.services.snapshot_sources import MemoizedEmbedder, SourceDeps, recall_available

router = Router()
_UUID = re.compile(UUID_PATTERN)


def snapshot_deps(deadline: RemainingTime | None = None) -> SnapshotDeps:
    """The snapshot service's ports; `deadline` is the invocation's (in-progress idempotency claims lapse with it)."""
    from agentkb.api.stores import graph_store

    container = get_container()
    search = search_deps()
    embedder = MemoizedEmbedder(search.embedder)  # per request: knowledge and memory share the query vector
    memory = None
    if recall_available():  # the recall feature ships on its own: without it the memory source is empty
        from agentkb.api.recall_routes import recall_deps
        from agentkb.services.snapshot_memory import memory_retriever

        memory = memory_retriever(dataclasses.replace(recall_deps(), embedder=embedder))
    sources = SourceDeps(dataclasses.replace(search, embedder=embedder), graph_store(), container.snapshots, memory)
    return SnapshotDeps(sources, container.tokenizer, container.idempotency, deadline=deadline)


def _raw(status: int, body: bytes) -> Response[Any]:
    # The stored bytes, untouched: GET answers byte-for-byte what the POST answered.
    return Response(status_code=status, content_type="application/json", body=body.decode("utf-8"))


@router.post("/v1/snapshots", operation_id="createSnapshot", summary="Build the context snapshot of an attempt",
             responses={201: ok(ContextSnapshotOut, "Built"),
                        200: ok(ContextSnapshotOut, "Already built for this runId + attemptId (same body)"),
                        409: ERRORS[400] | {"description": "Same runId + attemptId with a different request"},
                        **ERRORS,
                        503: ERRORS[503] | {"description": "Same runId + attemptId still being built by another "
                                            "request (Retry-After), or a dependency is unavailable"}})
def create_snapshot_route(request: Annotated[CreateSnapshotRequest, Body()]) -> Response[Any]:
    # This request's Lambda context, read here only: the router keeps the last request's context after it ends
    # (the idempotency adapter ignores a context that cannot tell its remaining time).
    outcome = create_snapshot(request, current_principal(), snapshot_deps(router.lambda_context))
    return _raw(outcome.status, outcome.body)


@router.get("/v1/snapshots/<snapshotId>", operation_id="getSnapshot", summary="A stored context snapshot",
            responses={200: ok(ContextSnapshotOut, "The snapshot, byte-for-byte as built"), **ERRORS})
def get_snapshot_route(snapshotId: str) -> Response[Any]:
    if not _UUID.match(snapshotId):
        raise NotFound("Snapshot not found")
    return _raw(200, get_snapshot(snapshotId, current_principal(), snapshot_deps()))
