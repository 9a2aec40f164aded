"""Powertools resolvers that keep each request's state per thread, so one process resolves requests concurrently.

Powertools stores the request being resolved on the BaseRouter CLASS (`BaseRouter.current_event = ...` in
`resolve()`), and the routing context and middleware frames on the resolver: every resolver and thread of a
process shares them. In the threaded local gateway that made two requests validate each other's bodies (a recall
answered 400 with another route's fields), which a process-wide resolve lock then prevented, at the price of
every request waiting for the one being resolved, embedding included (issue 16: a memory write waited behind a
document's embedding). These resolvers read the event, Lambda context, routing context and middleware frames from
thread-local storage instead, filled before Powertools' own `resolve()` runs; Powertools' class-level write is
never read by them. Lambda itself sends one request at a time, so nothing changes there.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, cast

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, APIGatewayRestResolver
from aws_lambda_powertools.utilities.typing import LambdaContext


class _PerThreadRequest:
    """Mixin for a Powertools resolver (placed before it): request state lives in a threading.local."""

    _request: threading.local

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._request = threading.local()  # first: the resolver's __init__ already sets context and frames
        super().__init__(*args, **kwargs)

    def resolve(self, event: Mapping[str, Any], context: LambdaContext) -> dict[str, Any]:
        self._request.current_event = self._to_proxy_event(dict(event))  # type: ignore[attr-defined]
        self._request.lambda_context = context
        return cast(dict[str, Any], super().resolve(event, context))  # type: ignore[misc]

    @property
    def current_event(self) -> Any:
        return self._request.current_event

    @current_event.setter
    def current_event(self, value: Any) -> None:
        self._request.current_event = value

    @property
    def lambda_context(self) -> Any:
        return getattr(self._request, "lambda_context", None)

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        self._request.lambda_context = value

    @property
    def context(self) -> dict[str, Any]:
        """The routing context (matched route, path arguments): Powertools clears it after every request."""
        return cast(dict[str, Any], self._per_thread("context"))

    @context.setter
    def context(self, value: dict[str, Any]) -> None:
        self._request.context = value

    @property
    def processed_stack_frames(self) -> list[str]:
        return cast(list[str], self._per_thread("processed_stack_frames"))

    @processed_stack_frames.setter
    def processed_stack_frames(self, value: list[str]) -> None:
        self._request.processed_stack_frames = value

    def _per_thread(self, name: str) -> Any:
        value = getattr(self._request, name, None)
        if value is None:
            value = {} if name == "context" else []
            setattr(self._request, name, value)
        return value


class RestResolver(_PerThreadRequest, APIGatewayRestResolver):
    """APIGatewayRestResolver (REST v1 and direct invocations) with per-thread request state."""


class HttpResolver(_PerThreadRequest, APIGatewayHttpResolver):
    """APIGatewayHttpResolver (HTTP API v2) with per-thread request state."""

