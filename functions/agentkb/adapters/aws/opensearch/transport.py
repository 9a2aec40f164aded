"""Signed HTTP to OpenSearch Serverless: botocore SigV4 (service `aoss`) over urllib3, retries with full jitter.

No opensearch-py: botocore and urllib3 already ship with boto3, so the Lambda bundle stays lean and the cold
start short. Everything is built on first request, never at import.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
import time
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentkb.adapters.aws import errors as aws_errors

SERVICE = "aoss"
MAX_CALL_S = 10.0  # per-call budget when no Lambda deadline is known
BASE_DELAY_S = 0.1
MAX_DELAY_S = 4.0
_deadline: ContextVar[float | None] = ContextVar("agentkb_deadline", default=None)


def set_deadline(remaining_ms: int | None, *, margin_ms: int = 1000) -> None:
    """Bound retries by the Lambda's remaining time (a handler calls this with context.get_remaining_time_in_millis)."""
    _deadline.set(None if remaining_ms is None else time.monotonic() + max(0, remaining_ms - margin_ms) / 1000)


class LambdaDeadline:
    """The InvocationDeadline port: OpenSearch retries end before the invocation does."""

    def set_remaining(self, remaining_ms: int | None) -> None:
        set_deadline(remaining_ms)


def call_deadline(max_call_s: float = MAX_CALL_S) -> float:
    """Monotonic time by which a call (with its retries) must be done."""
    own = time.monotonic() + max_call_s
    lambda_deadline = _deadline.get()
    return own if lambda_deadline is None else min(own, lambda_deadline)


@dataclass(frozen=True)
class HttpResponse:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


class Transport(Protocol):
    """One HTTP exchange; the SigV4 transport in AWS, a recording replayer in tests."""

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse: ...


class SigV4Transport:
    """urllib3 pool + botocore SigV4Auth; credentials come from the Lambda role (refreshed by botocore)."""

    def __init__(self, endpoint: str, region: str, *, timeout_s: float = 10.0) -> None:
        self.endpoint = endpoint.rstrip("/") if endpoint.startswith("https://") else f"https://{endpoint.rstrip('/')}"
        self.region = region
        self.timeout_s = timeout_s
        self._pool: Any = None
        self._credentials: Any = None
        self._lock = threading.Lock()

    def _setup(self) -> None:
        with self._lock:
            if self._pool is None:
                import urllib3

                from agentkb.adapters.aws.dynamodb.tables import aws_credentials

                self._credentials = aws_credentials()
                self._pool = urllib3.PoolManager(maxsize=16, retries=False,
                                                 timeout=urllib3.Timeout(connect=3.0, read=self.timeout_s))

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        if self._pool is None:
            self._setup()
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        payload = body or b""
        signed_headers = {**headers, "x-amz-content-sha256": hashlib.sha256(payload).hexdigest()}
        aws_request = AWSRequest(method=method, url=self.endpoint + path, data=payload, headers=signed_headers)
        SigV4Auth(self._credentials.get_frozen_credentials(), SERVICE, self.region).add_auth(aws_request)
        response = self._pool.request(method, self.endpoint + path, body=payload or None,
                                      headers=dict(aws_request.headers.items()))
        return HttpResponse(response.status, response.data, {k.lower(): v for k, v in response.headers.items()})


def ndjson(lines: Iterable[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode("utf-8")


class JsonClient:
    """JSON over a Transport with retries (429/5xx, connection errors): exponential backoff, full jitter."""

    def __init__(self, transport: Transport, *, sleep: Callable[[float], None] = time.sleep,
                 rng: Callable[[], float] = random.random, max_call_s: float = MAX_CALL_S) -> None:
        self.transport = transport
        self.sleep = sleep
        self.rng = rng
        self.max_call_s = max_call_s

    def backoff(self, attempt: int) -> float:
        return float(self.rng()) * float(min(MAX_DELAY_S, BASE_DELAY_S * 2.0 ** attempt))

    def call(self, method: str, path: str, body: Any = None, *, operation: str,
             accept: tuple[int, ...] = ()) -> tuple[int, Any]:
        """Send, retrying transient failures until the deadline; returns (status, parsed body) for 2xx/accepted."""
        raw, content_type = self._encode(body)
        deadline = call_deadline(self.max_call_s)
        attempt = 0
        while True:
            try:
                response = self.transport.request(method, path, raw, {"content-type": content_type} if raw else {})
            except Exception as exc:  # urllib3 raises its own hierarchy; all of it is a transport failure
                if not _is_transport_error(exc):
                    raise
                status, parsed, retry_after = 503, None, None
            else:
                status, parsed = response.status, aws_errors.parse_json(response.body)
                retry_after = _retry_after(response.headers)
                if 200 <= status < 300 or status in accept:
                    return status, parsed
                if status not in aws_errors.RETRYABLE_STATUSES:
                    raise aws_errors.index_failure(status, parsed, operation=operation)
            delay = max(self.backoff(attempt), retry_after or 0.0)
            if time.monotonic() + delay >= deadline:
                wait_s = max(1, int(retry_after or aws_errors.DEFAULT_RETRY_AFTER_S))
                raise aws_errors.index_throttled(operation, wait_s)
            self.sleep(delay)
            attempt += 1

    @staticmethod
    def _encode(body: Any) -> tuple[bytes | None, str]:
        if body is None:
            return None, "application/json"
        if isinstance(body, bytes):
            return body, "application/x-ndjson"
        return json.dumps(body, separators=(",", ":")).encode("utf-8"), "application/json"


def _retry_after(headers: dict[str, str]) -> float | None:
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _is_transport_error(exc: Exception) -> bool:
    module = type(exc).__module__
    return module.startswith("urllib3") or isinstance(exc, ConnectionError | TimeoutError)
