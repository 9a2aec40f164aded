"""Routes of the ingest function for agent memory: `POST /v1/memories`."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.adapters.factory import get_container
from agentkb.api.context import current_principal
from agentkb.api.graph_routes import graph_store
from agentkb.api.responses import ERRORS, ok
from agentkb.models.memory import MemoryWriteRequest, MemoryWriteResponse
from agentkb.ports import MemoryStore
from agentkb.services.memory import MemoryDeps, write_memory

router = Router()


def memory_store() -> MemoryStore:
    """The container's memory store when it has one, else the embedded store over the container's database."""
    container = get_container()
    store = getattr(container, "memories", None)
    return store if store is not None else _embedded_store(container.db)


@lru_cache(maxsize=4)
def _embedded_store(db: Any) -> MemoryStore:
    from agentkb.adapters.sqlite_memory import SqliteMemoryStore

    return SqliteMemoryStore(db)


def json_response(status: int, body: dict[str, Any]) -> Response[Any]:
    """Compact JSON in the key order the service built (absent-when-unset fields stay absent)."""
    return Response(status_code=status, content_type="application/json",
                    body=json.dumps(body, ensure_ascii=False, separators=(",", ":")))


@router.post("/v1/memories", operation_id="writeMemory", summary="Write an agent memory (recallable when 201 returns)",
             responses={201: ok(MemoryWriteResponse, "Stored (a new revision when the name existed)"),
                        200: ok(MemoryWriteResponse, "Idempotent replay or unchanged rewrite: nothing new stored"),
                        409: ERRORS[400] | {"description": "Idempotency key reused with a different body"},
                        422: ERRORS[400] | {"description": "Refused by the secrets firewall (nothing stored)"},
                        **ERRORS})
def write_memory_route(request: Annotated[MemoryWriteRequest, Body()]) -> Response[Any]:
    c = get_container()
    outcome = write_memory(request, current_principal(), MemoryDeps(memory_store(), graph_store(), c.embedder))
    return json_response(outcome.status, outcome.body)
