"""Where a tool call goes: the Lambda handlers in this process, or a running agentkb API over HTTP(S).

Both send the API key exactly as an HTTP client would, so a tool call passes the same gate as a request:
authentication, scopes, workspace reach, the per-key rate limit and the request validators.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any, Protocol

from agentkb.errors import DomainError, ServiceUnavailable, error_envelope
from agentkb.mcp.calls import ApiRequest, ApiResponse, api_headers, api_target


class Api(Protocol):
    """One API call with the caller's key (None: no key, the gate answers 401)."""

    def call(self, request: ApiRequest, key: str | None) -> ApiResponse: ...


def _decode(raw: bytes | str | None) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return error_envelope("INTERNAL_ERROR", "The API answered with a body that is not JSON")


class InProcessApi:
    """The embedded engine in this process: a REST v1 proxy event, as `agentkb serve` builds, to the real handler."""

    def call(self, request: ApiRequest, key: str | None) -> ApiResponse:
        from agentkb.local.server import dispatch, to_rest_event

        body = b"" if request.body is None else json.dumps(request.body).encode("utf-8")
        event = to_rest_event(request.method, api_target(request), api_headers(key), body)
        response = dispatch(event)
        headers = {k.lower(): str(v) for k, v in (response.get("headers") or {}).items()}
        headers.update({k.lower(): str(v[-1]) for k, v in (response.get("multiValueHeaders") or {}).items() if v})
        return ApiResponse(int(response["statusCode"]), headers, _decode(response.get("body")))


class HttpApi:
    """A running agentkb API (`agentkb serve`, or API Gateway on AWS) at `base_url`."""

    def __init__(self, base_url: str, timeout_s: float = 60.0,
                 opener: Callable[..., Any] = urllib.request.urlopen) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"--url must start with http:// or https:// (got {base_url!r})")
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self._open = opener

    def call(self, request: ApiRequest, key: str | None) -> ApiResponse:
        data = None if request.body is None else json.dumps(request.body).encode("utf-8")
        url = self.base_url + api_target(request)
        http_request = urllib.request.Request(url, data=data, method=request.method, headers=api_headers(key))
        try:
            with self._open(http_request, timeout=self.timeout_s) as response:
                return ApiResponse(response.status, _lower(response.headers), _decode(response.read()))
        except urllib.error.HTTPError as err:
            return ApiResponse(err.code, _lower(err.headers), _decode(err.read()))
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            return unreachable(f"agentkb API unreachable at {self.base_url} ({type(exc).__name__})")


def _lower(headers: Any) -> dict[str, str]:
    return {k.lower(): str(v) for k, v in (headers.items() if headers is not None else [])}


def unreachable(message: str) -> ApiResponse:
    """The API could not be reached: the same 503 envelope a dependency fault gets, with a retry hint."""
    error: DomainError = ServiceUnavailable(retry_after_s=5)
    envelope = error_envelope(error.code, message, {"reason": "api_unreachable"})
    return ApiResponse(503, {k.lower(): v for k, v in error.headers.items()}, envelope)
