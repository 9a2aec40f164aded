"""DomainError hierarchy: a stable code, an HTTP status and a safe message; one error envelope."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """A failure the client may see: code + status + a message that leaks nothing internal."""

    code = "INTERNAL_ERROR"
    http_status = 500
    default_message = "Internal server error"

    def __init__(self, message: str | None = None, *, details: Any = None, headers: dict[str, str] | None = None):
        self.message = message or self.default_message
        self.details = details
        self.headers = headers or {}
        super().__init__(self.message)

    def envelope(self) -> dict[str, Any]:
        return error_envelope(self.code, self.message, self.details)


def error_envelope(code: str, message: str, details: Any = None) -> dict[str, Any]:
    """The one error body of every non-2xx response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return {"error": error}


class BadRequest(DomainError):
    code, http_status, default_message = "BAD_REQUEST", 400, "Invalid request"


class Unauthorized(DomainError):
    code, http_status, default_message = "UNAUTHORIZED", 401, "Authentication required"


class InvalidToken(Unauthorized):
    """A bearer token refused (RFC 6750 `invalid_token`): the reason in the challenge, never the token."""

    default_message = "The access token is not valid"

    def __init__(self, reason: str, *, realm: str = "agentkb"):
        challenge = f'Bearer realm="{realm}", error="invalid_token", error_description="{reason}"'
        super().__init__(details={"code": "INVALID_TOKEN", "reason": reason}, headers={"WWW-Authenticate": challenge})


class Forbidden(DomainError):
    code, http_status, default_message = "FORBIDDEN", 403, "Insufficient permissions"


class InsufficientScope(Forbidden):
    def __init__(self, scope: str):
        super().__init__(f"This operation requires the {scope} scope", details={"code": "INSUFFICIENT_SCOPE",
                                                                                  "requiredScope": scope})


class NotOwner(Forbidden):
    """A write that names another principal as a memory's owner: a principal writes only as itself."""

    def __init__(self, message: str = "A principal writes only its own memories", *, path: str = "owner_id"):
        super().__init__(message, details={"code": "OWNER_MISMATCH", "path": path})


class NotFound(DomainError):
    code, http_status, default_message = "NOT_FOUND", 404, "Not found"


class MethodNotAllowed(DomainError):
    """A known path asked with a method it does not serve; `Allow` names the ones it does."""

    code, http_status, default_message = "METHOD_NOT_ALLOWED", 405, "This path does not support the method"

    def __init__(self, allowed: list[str]):
        super().__init__(details={"allowed": allowed}, headers={"Allow": ", ".join(allowed)})


class Conflict(DomainError):
    code, http_status, default_message = "CONFLICT", 409, "The request conflicts with current resource state"


class PayloadTooLarge(DomainError):
    code, http_status, default_message = "PAYLOAD_TOO_LARGE", 413, "Request body is too large"


class UnsupportedMediaType(DomainError):
    code, http_status = "UNSUPPORTED_MEDIA_TYPE", 415
    default_message = "Request body must be sent as application/json"


class Unprocessable(DomainError):
    """Content refused by policy (e.g. the secrets firewall)."""

    code, http_status, default_message = "UNPROCESSABLE", 422, "The content was refused by policy"


class RateLimited(DomainError):
    code, http_status, default_message = "RATE_LIMITED", 429, "API rate limit exceeded"


class ServiceUnavailable(DomainError):
    code, http_status, default_message = "SERVICE_UNAVAILABLE", 503, "Service temporarily unavailable"

    def __init__(self, message: str | None = None, *, retry_after_s: int | None = None, details: Any = None):
        headers = {"Retry-After": str(retry_after_s)} if retry_after_s is not None else {}
        super().__init__(message, details=details, headers=headers)
        self.retry_after_s = retry_after_s


IN_PROGRESS_RETRY_AFTER_S = 2


class OperationInProgress(ServiceUnavailable):
    """The same idempotent operation is running elsewhere right now: retrying after a short wait replays it."""

    default_message = "The same request is still being processed; retry shortly"

    def __init__(self, message: str | None = None, *, retry_after_s: int = IN_PROGRESS_RETRY_AFTER_S):
        super().__init__(message, retry_after_s=retry_after_s, details={"reason": "in_progress"})


class WriteInProgress(Conflict):
    """The same write is being stored by another request right now: 409 until it commits, then a retry replays it."""

    default_message = "The same write is still being stored; retry after it commits"

    def __init__(self, message: str | None = None, *, retry_after_s: int = IN_PROGRESS_RETRY_AFTER_S):
        super().__init__(message, details={"reason": "in_progress"}, headers={"Retry-After": str(retry_after_s)})


class RevisionMismatch(Conflict):
    """A document write named the revision it replaces (`expectedRevision`) and the document is at another one."""

    default_message = "The document is not at the expected revision"

    def __init__(self, current_revision: int, expected_revision: int | None = None):
        details: dict[str, int] = {"currentRevision": current_revision}
        if expected_revision is not None:
            details["expectedRevision"] = expected_revision
        super().__init__(details=details)
        self.current_revision = current_revision


class IdempotencyKeyReused(Conflict):
    """An idempotency key already recorded with a different payload: a retry can never succeed."""

    default_message = "This operation was already run with a different request"


class DependencyError(Exception):
    """Raised by adapters when a dependency (model, index, store) fails; services decide how to degrade.

    `retryable`: the same call may succeed later (throttling, a timeout, a 5xx from the service, a lost
    connection). Anything else (a rejected request, denied access, a missing table) is permanent.
    """

    def __init__(self, message: str, *, code: str = "dependency_failed", retryable: bool = False,
                 retry_after_s: int | None = None):
        super().__init__(message)
        self.code = code
        self.retryable = retryable
        self.retry_after_s = retry_after_s


class WriteConflict(DependencyError):
    """A concurrent writer changed the record between our read and our write: re-read and retry."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="write_conflict", retryable=True)


class RevisionConflict(WriteConflict):
    """A document write's revision check failed at commit: the name is at `current_revision` (0: free), held by
    `document_id`. Nothing of the write was stored."""

    def __init__(self, current_revision: int, document_id: str | None) -> None:
        super().__init__(f"the document name is at revision {current_revision}")
        self.current_revision = current_revision
        self.document_id = document_id


class EmbeddingUnavailable(DependencyError):
    """The embedder failed or timed out. `code` is one of recall's vec_degraded codes."""


DEPENDENCY_RETRY_AFTER_S = 5


def dependency_failure(exc: DependencyError) -> DomainError:
    """The one public answer to a dependency failure that no service degraded around.

    Retryable: 503 + Retry-After. Permanent: 500 INTERNAL_ERROR, because a Retry-After would invite retries that
    cannot succeed. Neither carries the cause: the caller logs it.
    """
    if exc.retryable:
        return ServiceUnavailable(retry_after_s=exc.retry_after_s or DEPENDENCY_RETRY_AFTER_S)
    return DomainError()
