"""API Gateway REST v1 proxy events and Lambda response bodies, for callers of the real handlers outside the HTTP
gateway: the benchmarks and the tests both build their events here (tests/helpers.py re-exports them)."""

from __future__ import annotations

import base64
import json
from typing import Any


def rest_event(method: str, path: str, body: Any = None, *, key: str | None = None,
               headers: dict[str, str] | None = None, query: dict[str, str] | None = None,
               raw_body: str | None = None, resource: str | None = None,
               base64_body: bool = False) -> dict[str, Any]:
    """A real-shaped API Gateway REST v1 proxy event."""
    hdrs = {"Content-Type": "application/json", "Accept": "application/json"}
    if key:
        hdrs["X-API-Key"] = key
    hdrs.update(headers or {})
    payload = raw_body if raw_body is not None else (None if body is None else json.dumps(body))
    if base64_body and payload is not None:
        payload = base64.b64encode(payload.encode()).decode()
    return {
        "resource": resource or path, "path": path, "httpMethod": method, "headers": hdrs,
        "multiValueHeaders": {k: [v] for k, v in hdrs.items()},
        "queryStringParameters": query, "multiValueQueryStringParameters": {k: [v] for k, v in (query or {}).items()}
        or None, "pathParameters": None, "stageVariables": None,
        "requestContext": {"resourcePath": resource or path, "httpMethod": method, "path": f"/prod{path}",
                           "stage": "prod", "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
                           "identity": {"sourceIp": "127.0.0.1", "userAgent": "pytest"}},
        "body": payload, "isBase64Encoded": base64_body,
    }


def body_of(response: dict[str, Any]) -> Any:
    """The JSON body of a Lambda proxy response (already decoded or absent: as it is)."""
    raw = response.get("body")
    if isinstance(raw, dict | list) or raw is None:
        return raw
    return json.loads(raw) if raw else None
