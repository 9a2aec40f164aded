"""The sweep of abandoned staged write-backs (dynamodb_memory_sweep.py) under moto: an abandoned stage is swept, a
live one is not, and a commit racing the sweep leaves exactly one outcome, whole or absent."""

from __future__ import annotations

from typing import Any

import pytest
from test_dynamodb_memory_staging import SIZE, Crash, Faulty, batch, faulty, leftovers, throttle, visible

import agentkb.adapters.aws.dynamodb.memory.staging as staging
from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.errors import Conflict, WriteConflict, WriteInProgress
from tests.memory_records import WS

__all__ = ["faulty"]  # the fixture, shared with the staging tests
Store = tuple[Faulty, DynamoDbMemoryStore]


def crash(_: dict[str, Any]) -> None:
    raise Crash


def abandon(client: Faulty, store: DynamoDbMemoryStore, tag: str, at_call: int) -> None:
    """A writer that dies at its `at_call`-th TransactWriteItems of this store (nothing discarded)."""
    done = client.calls.get("transact_write_items", 0)
    client.hooks[("transact_write_items", done + at_call)] = crash
    with pytest.raises(Crash):
        store.insert_batch(batch(tag))


def stage_records(client: Faulty) -> list[dict[str, Any]]:
    return [i for i in client.client.scan(TableName="memory")["Items"] if i["sk"]["S"].startswith("WB#")]


def test_an_abandoned_stage_is_swept_after_its_lease_and_a_live_one_is_not(
        faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    # Given a writer that died mid-stage (its second stage transaction never ran)
    abandon(client, store, "dead", 2)
    assert visible(store) == 0 and leftovers(client.client)
    # When a sweep runs within the lease, the stage is left alone: its writer could still be at work
    report = store.sweep_stages(WS)
    assert (report.read, report.swept, report.live) == (1, 0, 1) and stage_records(client)
    # After the lease it is swept: items, claims, links, markers and its record, nothing else
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    assert store.sweep_stages(WS).swept == 1
    assert leftovers(client.client) == [] and visible(store) == 0
    # And sweeping again finds nothing (idempotent)
    assert store.sweep_stages(WS).read == 0


def test_a_later_staged_writeback_of_the_workspace_sweeps_abandoned_stages(
        faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    # Given two stages abandoned by dead writers (other names than the next write-back's)
    abandon(client, store, "dead1", 2)
    abandon(client, store, "dead2", 3)
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    # When another staged write-back of the workspace commits
    written = store.insert_batch(batch("alive"))
    # Then its bounded sweep removed both abandoned stages: only its own memories and its record remain
    assert visible(store) == SIZE
    remaining = {int(sk[2:]) for sk in leftovers(client.client) if sk.startswith(("M#", "V#"))}
    assert remaining == {w.memory_id for w in written}
    assert [r["status"]["S"] for r in stage_records(client)] == ["committed"]


def test_a_sweep_never_touches_a_stage_whose_writer_is_at_work(faulty: Store) -> None:
    client, store = faulty
    reports: list[Any] = []
    # Given a sweep that runs while a writer is between its stage transactions (a young stage)
    client.hooks[("transact_write_items", 2)] = lambda _: reports.append(store.sweep_stages(WS))
    written = store.insert_batch(batch())
    # Then the sweep saw it live, and the write-back committed whole
    assert [(r.swept, r.live) for r in reports] == [(0, 1)]
    assert len(written) == SIZE and visible(store) == SIZE


def test_a_sweep_that_wins_the_race_with_the_commit_leaves_the_writeback_absent(
        faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)  # the writer is slow enough for its stage to look abandoned
    # Given a sweep that runs right before the commit's conditional flip (2nd update_item: the 1st allocates ids)
    client.hooks[("update_item", 2)] = lambda _: store.sweep_stages(WS)
    # When the writer commits, its condition (still pending) fails: it answers a retryable error
    with pytest.raises(WriteConflict) as failed:
        store.insert_batch(batch())
    assert failed.value.retryable
    # Then the write-back is absent, wholly: nothing visible, nothing left behind, and the names are free again
    assert visible(store) == 0 and leftovers(client.client) == []
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 300.0)
    assert len(store.insert_batch(batch())) == SIZE and visible(store) == SIZE


def test_a_writer_outliving_its_lease_stages_nothing_more_after_a_sweep(
        faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    # Given a sweep that runs between two stage transactions of a writer that looks dead (past its lease)
    client.hooks[("transact_write_items", 2)] = lambda _: store.sweep_stages(WS)
    # When the writer goes on, its next stage transaction fails on the stage record's condition check
    with pytest.raises(WriteConflict):
        store.insert_batch(batch())
    assert client.calls["transact_write_items"] == 2  # nothing staged after the sweep
    # Then nothing of it is left: items, claims, the links written before its failed transaction, the record
    assert visible(store) == 0 and leftovers(client.client) == []


def test_a_commit_that_wins_the_race_with_the_sweep_leaves_the_writeback_whole(
        faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    seen: list[dict[str, Any]] = []
    # Given a sweep that read the stage record while it was pending (right before the commit) ...
    client.hooks[("update_item", 2)] = lambda _: seen.extend(stage_records(client))
    written = store.insert_batch(batch())
    assert [r["status"]["S"] for r in seen] == ["pending"]
    # ... and acts on that read after the commit: its conditional abort fails, it discards nothing
    assert store.sweep.settle(WS, seen[0]) is False
    assert len(written) == SIZE and visible(store) == SIZE
    assert len(store.get_many(WS, [w.memory_id for w in written])) == SIZE


def test_a_sweep_that_died_half_way_is_finished_by_the_next(faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    abandon(client, store, "dead", 3)
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    # Given a sweep that aborted the stage, then died before deleting anything
    client.hooks[("batch_write_item", client.calls.get("batch_write_item", 0) + 1)] = crash
    with pytest.raises(Crash):
        store.sweep_stages(WS)
    assert [r["status"]["S"] for r in stage_records(client)] == ["aborted"]
    # Then the next sweep finishes it
    assert store.sweep_stages(WS).swept == 1 and leftovers(client.client) == []


def test_a_concurrent_duplicate_is_refused_with_retry_after_until_the_first_commits(
        faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    refused: list[BaseException] = []

    def duplicate(_: dict[str, Any]) -> None:
        try:
            store.insert_batch(batch())
        except Conflict as exc:
            refused.append(exc)

    # Given the same write-back sent again while the first is between its stage transactions
    client.hooks[("transact_write_items", 2)] = duplicate
    written = store.insert_batch(batch())
    # Then the duplicate got 409 with Retry-After and a message saying why; the first committed whole
    [error] = refused
    assert isinstance(error, WriteInProgress) and error.http_status == 409
    assert error.headers == {"Retry-After": "2"} and "still being stored" in error.message
    assert error.envelope()["error"]["details"] == {"reason": "in_progress"}
    assert len(written) == SIZE and visible(store) == SIZE


def test_the_full_sweep_finishes_the_publication_of_a_committed_stage(
        faulty: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty
    # Given a writer that died while publishing (committed: whole and visible, its items still carry `wb`) ...
    client.hooks[("transact_write_items", 4)] = throttle  # the first publish transaction
    written = store.insert_batch(batch())
    # ... and one of its memories forgotten since (its items are gone: a publish transaction over it fails)
    store.delete(WS, written[0].memory_id)
    # A bounded sweep (a write-back's) leaves committed stages alone; a full one, within the lease, too
    assert store.sweep_stages(WS, pages=1).read == 0 and store.sweep_stages(WS).published == 0
    # When the repair's full sweep runs after the lease
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    report = store.sweep_stages(WS)
    # Then no item carries `wb`, the record expires (TTL), and every remaining memory is still visible
    assert (report.published, report.swept) == (1, 0)
    items = client.client.scan(TableName="memory")["Items"]
    assert not [i for i in items if "wb" in i]
    assert [("ttl" in r, r["status"]["S"]) for r in stage_records(client)] == [(True, "committed")]
    assert visible(store) == SIZE - 1
    assert store.sweep_stages(WS).read == 0
