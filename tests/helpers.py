"""Test helpers: API Gateway events, invoking the real handlers, keys."""

from __future__ import annotations

import json
from typing import Any

from agentkb.local.events import body_of, rest_event

__all__ = ["body_of", "rest_event"]  # re-exported: tests import events from here


def http_event(method: str, path: str, body: Any = None, *, key: str | None = None,
               headers: dict[str, str] | None = None, query: dict[str, str] | None = None) -> dict[str, Any]:
    """A real-shaped API Gateway HTTP API (v2) event."""
    hdrs = {"content-type": "application/json"}
    if key:
        hdrs["x-api-key"] = key
    hdrs.update({k.lower(): v for k, v in (headers or {}).items()})
    raw_query = "&".join(f"{k}={v}" for k, v in (query or {}).items())
    return {
        "version": "2.0", "routeKey": f"{method} {path}", "rawPath": path, "rawQueryString": raw_query,
        "headers": hdrs, "queryStringParameters": query,
        "requestContext": {"http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1",
                                    "userAgent": "pytest"}, "requestId": "id", "routeKey": f"{method} {path}",
                           "stage": "$default"},
        "body": None if body is None else json.dumps(body), "isBase64Encoded": False,
    }


def response_headers(response: dict[str, Any]) -> dict[str, str]:
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    for k, v in (response.get("multiValueHeaders") or {}).items():
        headers[k.lower()] = v[-1]
    return headers


# -- handlers, keys and contract validation -----------------------------------------------------------------
from pathlib import Path  # noqa: E402

from testkit.corpus import handler, invoke, mint  # noqa: E402,F401  (re-exported: the tests import them from here)
from tests.upstream import OursAndUpstream, ours_and_upstream  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "schemas"


def embedded_db(ports: Any) -> Any:
    """The embedded engine's SQLite database behind a bundle (for assertions on stored rows)."""
    from agentkb.adapters.embedded.sqlite.db import open_database

    return open_database(ports.settings.database_path)


def validator(schema_file: str) -> OursAndUpstream:
    """Our schemas/ file and the upstream document it implements (tests/upstream.py)."""
    return ours_and_upstream(schema_file)


SEARCH_RESPONSE = validator("knowledge-search.v2.response.schema.json")
ERROR_RESPONSE = validator("error.schema.json")


class CountingOperation:
    """An idempotent operation for tests: counts its runs, fails the first `fail` of them with a domain error."""

    def __init__(self, fail: int = 0) -> None:
        self.calls, self.fail = 0, fail

    def __call__(self) -> dict[str, Any]:
        from agentkb.errors import NotFound

        self.calls += 1
        if self.calls <= self.fail:
            raise NotFound("transient for the test")
        return {"run": self.calls}
