"""Invocation plumbing: the request deadline, uploaded objects and idempotent operations (Powertools)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.idempotency import IdempotentCall, IdempotentResult


class InvocationDeadline(Protocol):
    """Bounds the adapters' own retries by the current invocation's remaining time (None: no known deadline)."""

    def set_remaining(self, remaining_ms: int | None) -> None: ...


class ObjectReader(Protocol):
    """The bytes of an uploaded object (the ingest queue's upload notifications name bucket and key)."""

    def read_object(self, bucket: str, key: str) -> bytes: ...


@runtime_checkable
class RemainingTime(Protocol):
    """How long the current invocation may still run (a Lambda context has this method)."""

    def get_remaining_time_in_millis(self) -> int: ...


class Idempotency(Protocol):
    """Runs an operation once per key across every process: repeats replay the recorded result.

    Raises `OperationInProgress` while another run of the key holds it (until it ends, or until the invocation
    deadline it registered passes) and `IdempotencyKeyReused` when the key's recorded payload hash differs. An
    operation that raises leaves no record, so the next call runs it again.
    """

    def run_once(self, call: IdempotentCall, operation: Callable[[], dict[str, Any]],
                 deadline: RemainingTime | None = None) -> IdempotentResult: ...
