"""The one place for Powertools logging, tracing and metrics."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics

from agentkb.config import metrics_enabled, tracing_enabled

# What `inject_lambda_context` appends for one invocation. Powertools keeps appended keys in one dict per process:
# Lambda runs one invocation at a time, but the local gateway runs one per thread, and a request's line showed the
# ids of whichever request had started last. These go to Powertools' per-thread keys (a ContextVar the formatter
# lays over the shared ones), so a line carries the ids of the request whose thread logged it.
INVOCATION_KEYS = frozenset({"cold_start", "function_name", "function_memory_size", "function_arn",
                             "function_request_id", "correlation_id"})


class InvocationLogger(Logger):
    """A Powertools Logger whose invocation keys (INVOCATION_KEYS) are the logging thread's own."""

    def append_keys(self, **additional_keys: object) -> None:
        mine = {k: v for k, v in additional_keys.items() if k in INVOCATION_KEYS}
        if mine:
            self.thread_safe_append_keys(**mine)
        shared = {k: v for k, v in additional_keys.items() if k not in INVOCATION_KEYS}
        if shared:
            super().append_keys(**shared)

    def get_correlation_id(self) -> str | None:
        value = self.thread_safe_get_current_keys().get("correlation_id")
        return None if value is None else str(value)


logger = InvocationLogger(service="agentkb")
metrics = Metrics(namespace="agentkb", service="agentkb")
F = TypeVar("F", bound=Callable[..., Any])
# The functions' only I/O: boto3 (botocore) and the OpenSearch transport (urllib3 over http.client). Powertools'
# default patches every library X-Ray knows that is importable (requests, sqlite3, httpx, ...): ~45 ms more CPU
# at cold start for calls these functions never make (bench/coldstart/run.py --first-response).
TRACED_MODULES = ("botocore", "httplib")
if not metrics_enabled():
    # count_response adds nothing then, and Powertools would warn on the first flush of an empty buffer (local runs,
    # benchmarks, tests); with metrics on, every response adds a count and the warning cannot happen.
    warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)


def capture_handler(handler: F) -> F:
    """Powertools Tracer around the handler when X-Ray tracing is on (in Lambda); a no-op elsewhere.

    The Tracer pulls in the X-Ray SDK (hundreds of ms of import); outside Lambda Powertools disables tracing
    anyway, so the SDK is imported only where it will be used.
    """
    if not tracing_enabled():
        return handler
    from aws_lambda_powertools import Tracer

    tracer = Tracer(service="agentkb", patch_modules=TRACED_MODULES)
    return tracer.capture_lambda_handler(capture_response=False)(handler)  # type: ignore[no-any-return]


def count_response(status: int) -> None:
    """One EMF count per response class (Responses2xx, Responses4xx, ...).

    Skipped when metrics are disabled: Powertools then never clears its buffer and would print every 100th call.
    """
    if metrics_enabled():
        metrics.add_metric(name=f"Responses{status // 100}xx", unit="Count", value=1)
