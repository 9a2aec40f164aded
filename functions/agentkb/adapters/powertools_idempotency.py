"""The Idempotency port on Powertools' idempotency utility; the one place its errors become agentkb errors.

AWS: Powertools' own `DynamoDBPersistenceLayer` on the idempotency table (`id` key, TTL attribute `expiration`).
Embedded engine: the same runner over `sqlite_idempotency.SqlitePersistenceLayer`. Powertools' idempotency
module (jmespath, boto3 resources) is imported on the first run only, never at import: cold starts of routes that
never run an idempotent operation do not pay for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentkb.adapters.aws.errors import store_failure
from agentkb.errors import DependencyError, IdempotencyKeyReused, OperationInProgress
from agentkb.models.idempotency import IdempotentCall, IdempotentResult
from agentkb.ports.invocation import RemainingTime

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

# A completed record answers repeats for an hour: longer than every SQS re-delivery of one message
# (visibility timeout 6 min x maxReceiveCount 5); a snapshot is replayed from its own store after that anyway.
RECORD_TTL_S = 60 * 60
# Without an invocation deadline (the embedded engine, CLI), an in-progress claim lapses after this long, so a
# crashed run never blocks its key for the whole record TTL. Longer than the longest function timeout (60 s).
DEFAULT_LEASE_MS = 90_000


@dataclass(frozen=True)
class FixedLease:
    """A deadline of a fixed length from now, for runs that have no Lambda context."""

    millis: int = DEFAULT_LEASE_MS

    def get_remaining_time_in_millis(self) -> int:
        return self.millis


def dynamodb_persistence(client: Callable[[], Any], table: str) -> Callable[[], Any]:
    """A factory of Powertools' DynamoDB persistence layer on our lazily built client."""

    def build() -> Any:
        from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

        return DynamoDBPersistenceLayer(table_name=table, boto3_client=client())

    return build


class PowertoolsIdempotency:
    """Runs each call under Powertools `idempotent_function` with key + payload validation on one persistence layer.

    One layer per scope: a Powertools layer keeps the config of its first use and its key prefix per call.
    """

    def __init__(self, persistence: Callable[[], Any], *, store: str = "idempotency",
                 record_ttl_s: int = RECORD_TTL_S) -> None:
        self._persistence = persistence
        self._store = store
        self._record_ttl_s = record_ttl_s
        self._layers: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _layer(self, scope: str) -> Any:
        with self._lock:
            layer = self._layers.get(scope)
            if layer is None:
                layer = self._layers[scope] = self._persistence()
            return layer

    def run_once(self, call: IdempotentCall, operation: Callable[[], dict[str, Any]],
                 deadline: RemainingTime | None = None) -> IdempotentResult:
        """Run `operation` once for `call`; a completed call replays its recorded value (see ports.Idempotency)."""
        from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

        replayed = False

        def on_replay(response: Any, idempotent_data: DataRecord) -> Any:
            nonlocal replayed
            replayed = True
            return response

        config = IdempotencyConfig(event_key_jmespath="key", payload_validation_jmespath="payload",
                                   raise_on_no_idempotency_key=True, expires_after_seconds=self._record_ttl_s,
                                   hash_function="sha256", response_hook=on_replay)
        # In-progress claims expire with the invocation: a run killed by its timeout frees the key for retries.
        if not callable(getattr(deadline, "get_remaining_time_in_millis", None)):
            deadline = FixedLease()  # no deadline, or a context object that cannot tell its remaining time
        config.register_lambda_context(deadline)  # type: ignore[arg-type]

        def run(data: dict[str, str]) -> dict[str, Any]:
            return operation()

        guarded = idempotent_function(run, data_keyword_argument="data", persistence_store=self._layer(call.scope),
                                      config=config, key_prefix=f"agentkb.{call.scope}")
        with translated_errors(self._store):
            value = guarded(data={"key": call.key, "payload": call.payload_hash})
        return IdempotentResult(value if isinstance(value, dict) else {}, replayed)


@contextmanager
def translated_errors(store: str) -> Iterator[None]:
    """Powertools idempotency errors -> domain errors; the operation's own errors pass through untouched."""
    try:
        yield
    except Exception as exc:
        if not type(exc).__module__.startswith("aws_lambda_powertools.utilities.idempotency"):
            raise
        raise _domain_error(exc, store) from exc


def _domain_error(exc: BaseException, store: str) -> Exception:
    from aws_lambda_powertools.utilities.idempotency import exceptions as e

    if isinstance(exc, e.IdempotencyAlreadyInProgressError | e.IdempotencyInconsistentStateError):
        return OperationInProgress()  # inconsistent: the record changed under us on every one of 3 tries
    if isinstance(exc, e.IdempotencyValidationError):
        return IdempotencyKeyReused()
    if isinstance(exc, e.IdempotencyPersistenceLayerError):
        return store_failure(exc.__cause__ or exc, store=store)
    return DependencyError(f"{store} failed: {type(exc).__name__}", code="store_failed")
