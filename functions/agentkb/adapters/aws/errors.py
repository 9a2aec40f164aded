"""The one place where vendor failures (OpenSearch HTTP, botocore) become agentkb errors.

Retryable (throttling, timeouts, a 5xx from the service, a lost connection) is a 503 with Retry-After; permanent
(a rejected request such as DynamoDB's ValidationException, denied access, a missing table or index mapping, an
unknown model) is a non-retryable DependencyError that the API answers as a generic 500 and logs with its cause
(errors.dependency_failure). Embedding failures carry recall's vec_degraded codes: `timeout`, `slot_exhausted`,
`embedding_failed`.
"""

from __future__ import annotations

import json
from typing import Any

from agentkb.errors import DependencyError, EmbeddingUnavailable, ServiceUnavailable

RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
THROTTLING_CODES = frozenset({
    "ThrottlingException", "TooManyRequestsException", "ServiceQuotaExceededException",
    "ProvisionedThroughputExceededException", "RequestLimitExceeded", "ServiceUnavailableException",
    "ModelNotReadyException", "InternalServerException", "InternalServerError", "LimitExceededException",
})
DEFAULT_RETRY_AFTER_S = 5


def index_error_type(body: Any) -> str | None:
    """The OpenSearch error type of a response body ({"error": {"type": ...}}), if any."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("type") or "") or None
    return None


def is_index_missing(status: int, body: Any) -> bool:
    return status == 404 and index_error_type(body) in (None, "index_not_found_exception")


def index_failure(status: int, body: Any, *, operation: str) -> DependencyError:
    """A non-retryable OpenSearch answer: never the body text to clients (it can echo documents)."""
    kind = index_error_type(body) or f"http_{status}"
    return DependencyError(f"opensearch {operation} failed: {kind}", code="index_failed")


def index_throttled(operation: str, retry_after_s: int = DEFAULT_RETRY_AFTER_S) -> ServiceUnavailable:
    return ServiceUnavailable("The search index is busy; retry shortly", retry_after_s=retry_after_s,
                              details={"reason": "index_throttled", "operation": operation})


def parse_json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


def client_error_code(exc: BaseException) -> str | None:
    """The AWS error code of a botocore ClientError (duck-typed: no botocore import here)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code") or "") or None
    return None


# botocore's transport failures (botocore.exceptions), matched by name: no botocore import on this module's path.
TRANSPORT_ERRORS = frozenset({
    "ReadTimeoutError", "ConnectTimeoutError", "TimeoutError", "ConnectionClosedError", "EndpointConnectionError",
    "ConnectionError", "HTTPClientError", "ProxyConnectionError", "ResponseStreamingError",
})


def _is_timeout(exc: BaseException) -> bool:
    """A timeout or a lost connection: the request may not have reached the service, so a retry may succeed."""
    return type(exc).__name__ in TRANSPORT_ERRORS or isinstance(exc, TimeoutError | ConnectionError)


def _service_status(exc: BaseException) -> int:
    response = getattr(exc, "response", None)
    metadata = response.get("ResponseMetadata") if isinstance(response, dict) else None
    status = metadata.get("HTTPStatusCode") if isinstance(metadata, dict) else None
    return status if isinstance(status, int) else 0


def is_retryable(exc: BaseException) -> bool:
    """Throttling, a timeout, a lost connection or a 5xx from the service."""
    return is_throttling(exc) or _is_timeout(exc) or _service_status(exc) >= 500


def is_aws_failure(exc: BaseException) -> bool:
    """A botocore error (a service answer or a transport failure), as opposed to a bug in our own code."""
    return _is_timeout(exc) or isinstance(getattr(exc, "response", None), dict) \
        or type(exc).__module__.startswith("botocore")


def is_throttling(exc: BaseException) -> bool:
    return client_error_code(exc) in THROTTLING_CODES


def embedding_failure(exc: BaseException) -> EmbeddingUnavailable:
    """Bedrock invoke_model failure -> EmbeddingUnavailable with a vec_degraded code."""
    if _is_timeout(exc):
        return EmbeddingUnavailable("the embedding model timed out", code="timeout", retryable=True)
    if is_throttling(exc):
        return EmbeddingUnavailable("the embedding model is throttled", code="slot_exhausted", retryable=True)
    code = client_error_code(exc) or type(exc).__name__
    return EmbeddingUnavailable(f"the embedding model failed: {code}", code="embedding_failed")


def rerank_failure_reason(exc: BaseException) -> str:
    """Bedrock rerank failure -> the reason reported with rerankerStatus "unavailable"."""
    if _is_timeout(exc):
        return "the reranking model timed out"
    if is_throttling(exc):
        return "the reranking model is throttled"
    return f"the reranking model failed: {client_error_code(exc) or type(exc).__name__}"


def store_failure(exc: BaseException, *, store: str) -> Exception:
    """DynamoDB / Secrets Manager / S3 failure: retryable -> 503, anything else -> DependencyError (500, logged)."""
    if is_retryable(exc):
        return ServiceUnavailable("A backing store is busy; retry shortly", retry_after_s=DEFAULT_RETRY_AFTER_S,
                                  details={"reason": f"{store}_throttled"})
    return DependencyError(f"{store} failed: {client_error_code(exc) or type(exc).__name__}", code="store_failed")


def is_conditional_failure(exc: BaseException) -> bool:
    return client_error_code(exc) in {"ConditionalCheckFailedException", "TransactionCanceledException"}


def failed_a_condition(exc: BaseException) -> bool:
    """A condition of the write was false: unlike is_conditional_failure, a transaction cancelled for another
    reason (a concurrent transaction on an item, throttling) does not count."""
    if client_error_code(exc) == "ConditionalCheckFailedException":
        return True
    reasons = getattr(exc, "response", {}).get("CancellationReasons") or []
    return client_error_code(exc) == "TransactionCanceledException" and any(
        r.get("Code") == "ConditionalCheckFailed" for r in reasons)
