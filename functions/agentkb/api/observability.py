"""The one place for Powertools logging, tracing and metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics

from agentkb.config import tracing_enabled

logger = Logger(service="agentkb")
metrics = Metrics(namespace="agentkb", service="agentkb")
F = TypeVar("F", bound=Callable[..., Any])


def capture_handler(handler: F) -> F:
    """Powertools Tracer around the handler when X-Ray tracing is on (in Lambda); a no-op elsewhere.

    The Tracer pulls in the X-Ray SDK (hundreds of ms of import); outside Lambda Powertools disables tracing
    anyway, so the SDK is imported only where it will be used.
    """
    if not tracing_enabled():
        return handler
    from aws_lambda_powertools import Tracer

    return Tracer(service="agentkb").capture_lambda_handler(capture_response=False)(handler)  # type: ignore[no-any-return]
