"""Idempotency port congruence: Powertools' runner over SQLite (embedded) and over DynamoDB (AWS, moto).

Once per key across processes, repeats replay the recorded result, a reused key with another payload is a 409,
a run in progress is a 503 + Retry-After, a failed run leaves nothing behind, and scopes never meet.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from port_engines import EnginePorts as Ports

from agentkb.errors import IdempotencyKeyReused, NotFound, OperationInProgress
from agentkb.models.idempotency import IdempotentCall
from tests.helpers import CountingOperation

CALL = IdempotentCall("contract", "key-1", "payload-1")


class Deadline:
    """The invocation's remaining time (a Lambda context has this method)."""

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 60_000


def test_the_first_run_is_recorded_and_a_repeat_replays_it(ports: Ports) -> None:
    op = CountingOperation()
    first = ports.idempotency.run_once(CALL, op, Deadline())
    again = ports.idempotency.run_once(CALL, op, Deadline())
    assert (first.value, first.replayed) == ({"run": 1}, False)
    assert (again.value, again.replayed, op.calls) == ({"run": 1}, True, 1)


def test_the_same_key_with_another_payload_is_a_conflict(ports: Ports) -> None:
    op = CountingOperation()
    ports.idempotency.run_once(CALL, op, Deadline())
    with pytest.raises(IdempotencyKeyReused) as raised:
        ports.idempotency.run_once(IdempotentCall("contract", "key-1", "payload-2"), op, Deadline())
    assert (raised.value.http_status, raised.value.code, op.calls) == (409, "CONFLICT", 1)


def test_a_failed_run_leaves_no_record_and_the_retry_runs(ports: Ports) -> None:
    op = CountingOperation(fail=1)
    with pytest.raises(NotFound):  # the operation's own error, untranslated
        ports.idempotency.run_once(CALL, op, Deadline())
    retried = ports.idempotency.run_once(CALL, op, Deadline())
    assert (retried.value, retried.replayed, op.calls) == ({"run": 2}, False, 2)


def test_scopes_and_keys_never_meet(ports: Ports) -> None:
    op = CountingOperation()
    results = [ports.idempotency.run_once(call, op, Deadline()).value for call in (
        CALL, IdempotentCall("other-scope", "key-1", "payload-1"), IdempotentCall("contract", "key-2", "payload-1"))]
    assert results == [{"run": 1}, {"run": 2}, {"run": 3}]


def test_a_run_in_progress_answers_503_with_retry_after(ports: Ports) -> None:
    started, release = threading.Event(), threading.Event()

    def hold() -> dict[str, Any]:
        started.set()
        assert release.wait(30)
        return {"held": True}

    holder = threading.Thread(target=lambda: ports.idempotency.run_once(CALL, hold, Deadline()), daemon=True)
    holder.start()  # another instance holding the key (its own thread: its own connection)
    assert started.wait(30)
    op = CountingOperation()
    try:
        with pytest.raises(OperationInProgress) as raised:
            ports.idempotency.run_once(CALL, op, Deadline())
    finally:
        release.set()
        holder.join(30)
    assert (raised.value.http_status, int(raised.value.headers["Retry-After"]) >= 1, op.calls) == (503, True, 0)
    assert ports.idempotency.run_once(CALL, op, Deadline()).value == {"held": True}
