"""The embedded engine's Idempotency port: Powertools' runner over the SQLite persistence layer, same guarantees."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.idempotency import SqlitePersistenceLayer
from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency
from agentkb.errors import DependencyError, IdempotencyKeyReused, NotFound, OperationInProgress
from agentkb.models.idempotency import IdempotentCall
from tests.helpers import CountingOperation

CALL = IdempotentCall("test", "key-1", "payload-1")


class Deadline:
    def __init__(self, millis: int = 60_000) -> None:
        self.millis = millis

    def get_remaining_time_in_millis(self) -> int:
        return self.millis


@pytest.fixture()
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(tmp_path / "idem.sqlite3")
    yield database
    database.close()


def runner(db: Database, **kwargs: Any) -> PowertoolsIdempotency:
    return PowertoolsIdempotency(lambda: SqlitePersistenceLayer(db), **kwargs)


def rows(db: Database) -> list[dict[str, Any]]:
    return [dict(r) for r in db.connection().execute("SELECT * FROM idempotency")]


def test_first_run_stores_and_a_repeat_replays_without_running(db: Database) -> None:
    op, idem = CountingOperation(), runner(db)
    first = idem.run_once(CALL, op, Deadline())
    again = runner(db).run_once(CALL, op, Deadline())  # another process on the same file
    assert (first.value, first.replayed, again.value, again.replayed, op.calls) == ({"run": 1}, False, {"run": 1},
                                                                                     True, 1)
    [row] = rows(db)
    assert row["id"].startswith("agentkb.test#") and row["status"] == "COMPLETED" and row["data"] == '{"run": 1}'


def test_an_in_progress_duplicate_on_another_connection_is_rejected(db: Database) -> None:
    started, release = threading.Event(), threading.Event()

    def hold() -> dict[str, Any]:
        started.set()
        assert release.wait(30)
        return {"held": True}

    holder = threading.Thread(target=lambda: runner(db).run_once(CALL, hold, Deadline()), daemon=True)
    holder.start()  # its own thread, so its own SQLite connection
    assert started.wait(30)
    op = CountingOperation()
    with pytest.raises(OperationInProgress) as raised:
        runner(db).run_once(CALL, op, Deadline())
    release.set()
    holder.join(30)
    assert (raised.value.http_status, raised.value.headers["Retry-After"], op.calls) == (503, "2", 0)
    assert runner(db).run_once(CALL, op, Deadline()).value == {"held": True}


def test_a_claim_lapses_with_its_deadline_and_a_record_with_its_ttl(db: Database) -> None:
    def crash() -> dict[str, Any]:
        raise SystemExit  # not an Exception: nothing cleans up, like a killed process

    with pytest.raises(SystemExit):
        runner(db).run_once(CALL, crash, Deadline(-1))
    assert rows(db)[0]["status"] == "INPROGRESS"
    op = CountingOperation()
    assert runner(db).run_once(CALL, op, Deadline()).value == {"run": 1}

    expired = IdempotentCall("test", "key-2")
    runner(db, record_ttl_s=-10).run_once(expired, op, Deadline())
    assert runner(db).run_once(expired, op, Deadline()).value == {"run": 3}  # the expired record no longer answers


def test_without_a_deadline_the_claim_gets_a_fixed_lease(db: Database) -> None:
    runner(db).run_once(CALL, CountingOperation())
    [row] = rows(db)
    assert row["in_progress_expiration"] is not None


def test_a_failure_removes_the_record_and_a_retry_runs(db: Database) -> None:
    op, idem = CountingOperation(fail=1), runner(db)
    with pytest.raises(NotFound):  # the operation's own error, untranslated
        idem.run_once(CALL, op, Deadline())
    assert rows(db) == []
    assert idem.run_once(CALL, op, Deadline()).value == {"run": 2}


def test_the_same_key_with_a_different_payload_is_rejected_even_in_progress(db: Database) -> None:
    idem, op = runner(db), CountingOperation()
    inner: list[Exception] = []

    def reenter() -> dict[str, Any]:
        with pytest.raises(IdempotencyKeyReused) as raised:
            idem.run_once(IdempotentCall("test", "key-1", "payload-2"), op, Deadline())
        inner.append(raised.value)
        return {"outer": True}

    idem.run_once(CALL, reenter, Deadline())
    with pytest.raises(IdempotencyKeyReused) as after:
        idem.run_once(IdempotentCall("test", "key-1", "payload-2"), op, Deadline())
    assert (after.value.http_status, after.value.code, len(inner), op.calls) == (409, "CONFLICT", 1, 0)


def test_a_broken_store_is_a_dependency_error(db: Database) -> None:
    db.connection().execute("DROP TABLE idempotency")
    with pytest.raises(DependencyError):
        runner(db).run_once(CALL, CountingOperation(), Deadline())
