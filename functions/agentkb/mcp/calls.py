"""One API call as the MCP tools see it: the request a tool builds and the response it renders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

JSON = "application/json"
USER_AGENT = "agentkb-mcp"


@dataclass(frozen=True)
class ApiRequest:
    method: str
    path: str
    query: dict[str, str] | None
    body: dict[str, Any] | None


@dataclass(frozen=True)
class ApiResponse:
    status: int
    headers: dict[str, str]  # lower-case names
    body: Any


def api_target(request: ApiRequest) -> str:
    return request.path + (f"?{urlencode(request.query)}" if request.query else "")


def api_headers(key: str | None) -> dict[str, str]:
    headers = {"Content-Type": JSON, "Accept": JSON, "User-Agent": USER_AGENT}
    if key and key.startswith("akb_"):
        headers["X-API-Key"] = key
    elif key:  # an OAuth access token: the gate verifies it against the configured issuer
        headers["Authorization"] = f"Bearer {key}"
    return headers
