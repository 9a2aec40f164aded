"""The one Lambda handler factory: each functions/<name>/handler.py is `lambda_handler = lambda_handler_for(name)`.

At import this module loads only the standard library and coldstart_gc, so that the collector is paused before
the function's app, Powertools and pydantic are imported (coldstart_gc.py says why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkb.coldstart_gc import pause_collector, resume_after_first_response

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def lambda_handler_for(function: str, *, keep_collector: bool = False, ingest_queue: bool = False) -> Handler:
    """The handler of one function: REST v1, HTTP API v2 and direct invocations of its routes, and with
    `ingest_queue` the SQS batches of the ingest queue. Unless `keep_collector`, the cyclic collector waits for
    the first response."""
    if not keep_collector:
        pause_collector()
    handler = _observed(_served(function, ingest_queue))
    return handler if keep_collector else resume_after_first_response(handler)


def _served(function: str, ingest_queue: bool) -> Handler:
    from agentkb.api.functions import function_app

    app = function_app(function)  # built at import: the cold start's init, not its first request
    if not ingest_queue:
        return app
    from agentkb.api.ingest_queue import handle_sqs, is_sqs_event

    def serve(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return handle_sqs(event, context, app.ports()) if is_sqs_event(event) else app(event, context)

    return serve


def _observed(serve: Handler) -> Handler:
    """`serve` with the invocation's log context (correlation id), trace and metrics flush."""
    from aws_lambda_powertools.logging import correlation_paths

    from agentkb.api.observability import capture_handler, logger, metrics

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, log_event=False)
    @capture_handler
    @metrics.log_metrics
    def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return serve(event, context)

    return lambda_handler
