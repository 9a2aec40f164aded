"""Response helpers and the OpenAPI description of the error envelope."""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response
from pydantic import BaseModel

from agentkb.models.search import ErrorResponse


def ok(model: type[BaseModel], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"model": model}}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"model": ErrorResponse}}}


ERRORS: dict[int, dict[str, Any]] = {
    400: _error("Invalid request (issue paths in details)"),
    401: _error("Missing or invalid API key"),
    403: _error("Insufficient scope (details.code)"),
    404: _error("Not found, or in a workspace the key cannot reach"),
    413: _error("Request body over 2 MiB"),
    415: _error("Body is not application/json"),
    429: _error("Rate limited (Retry-After)"),
    500: _error("Internal error"),
    503: _error("A dependency is unavailable (Retry-After)"),
}
# The writes that name an owner: a principal writes only its own memories (services/memory.py memory_owner).
NOT_OWNER = _error("Insufficient scope, or another principal named as the memory's owner (details.code "
                   "INSUFFICIENT_SCOPE or OWNER_MISMATCH)")


def json_response(status: int, body: dict[str, Any] | BaseModel) -> Response[Any]:
    """Compact JSON in the key order the service built; a model's fields in declaration order, those it never set
    omitted (absent-when-unset fields stay absent). Numbers are written by `json`, as for a dict body (pydantic's
    own writer spells 1e-06 as 1e-6)."""
    if isinstance(body, BaseModel):
        body = body.model_dump(mode="json", exclude_unset=True)
    return Response(status_code=status, content_type="application/json",
                    body=json.dumps(body, ensure_ascii=False, separators=(",", ":")))


def json_model_response(status: int, model: BaseModel, headers: dict[str, str] | None = None) -> Response[Any]:
    """Serialise a response model; fields never set (optional extras such as rerankerScore) are omitted."""
    return Response(status_code=status, content_type="application/json",
                    body=model.model_dump_json(exclude_unset=True), headers=headers or {})
