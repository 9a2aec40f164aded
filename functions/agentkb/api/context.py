"""Per-request context set by the function app: the principal, the invocation's deadline, extra response headers."""

from __future__ import annotations

from contextvars import ContextVar

from agentkb.errors import Unauthorized
from agentkb.models.domain import Principal
from agentkb.ports.invocation import RemainingTime

_principal: ContextVar[Principal | None] = ContextVar("agentkb_principal", default=None)
_invocation: ContextVar[RemainingTime | None] = ContextVar("agentkb_invocation", default=None)
_extra_headers: ContextVar[dict[str, str] | None] = ContextVar("agentkb_extra_headers", default=None)


def current_principal() -> Principal:
    principal = _principal.get()
    if principal is None:  # a route reached without the gate: never serve it
        raise Unauthorized()
    return principal


def set_principal(principal: Principal | None) -> None:
    _principal.set(principal)


def set_invocation(lambda_context: object) -> None:
    """The current invocation's Lambda context, when it can tell its remaining time (else none)."""
    if isinstance(lambda_context, RemainingTime) and callable(lambda_context.get_remaining_time_in_millis):
        _invocation.set(lambda_context)
    else:
        _invocation.set(None)


def invocation_deadline() -> RemainingTime | None:
    """A route's dependency: this request's deadline (never the last request's, unlike a router's context)."""
    return _invocation.get()


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
