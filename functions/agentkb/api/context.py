"""Per-request context set by the gate: the authenticated principal, and extra response headers."""

from __future__ import annotations

from contextvars import ContextVar

from agentkb.errors import Unauthorized
from agentkb.models.domain import Principal

_principal: ContextVar[Principal | None] = ContextVar("agentkb_principal", default=None)
_extra_headers: ContextVar[dict[str, str] | None] = ContextVar("agentkb_extra_headers", default=None)


def current_principal() -> Principal:
    principal = _principal.get()
    if principal is None:  # a route reached without the gate: never serve it
        raise Unauthorized()
    return principal


def set_principal(principal: Principal | None) -> None:
    _principal.set(principal)


def add_response_header(name: str, value: str) -> None:
    """Let a route attach a header (e.g. a degradation signal) without owning the Response object."""
    headers = _extra_headers.get()
    if headers is None:
        headers = {}
        _extra_headers.set(headers)
    headers[name] = value


def take_response_headers() -> dict[str, str]:
    headers = _extra_headers.get() or {}
    _extra_headers.set(None)
    return headers
