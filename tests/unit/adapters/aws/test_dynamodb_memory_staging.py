"""Staged write-backs on DynamoDB (dynamodb_memory_staging.py): whole or absent for every reader, through injected
failures in the k-th transaction, a crash before the commit, a crash after it, and readers in between."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

import agentkb.adapters.aws.dynamodb.memory.staging as staging
from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.errors import Conflict, DomainError
from agentkb.models.memory.detail import MemoryListQuery
from testkit.moto_aws import one_backup_per_table
from tests.contract.memory_engines import memory_table
from tests.memory_records import WS, record, scope, unit

SIZE = 2 * staging.CHUNK + 5  # three stage transactions: the 4th transaction is the first publish one


class Crash(BaseException):
    """A process that dies mid-write: no handler of the store runs after it."""


class Faulty:
    """The moto client, with a hook run before the n-th call of one operation."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.hooks: dict[tuple[str, int], Callable[[dict[str, Any]], None]] = {}
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.client, name)

        def call(**kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            hook = self.hooks.get((name, self.calls[name]))
            if hook is not None:
                hook(kwargs)
            return real(**kwargs)
        return call


@pytest.fixture()
def faulty(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Faulty, DynamoDbMemoryStore]]:
    one_backup_per_table(monkeypatch)  # moto's rollback copy once per table, not per item (aws_backend.py)
    with memory_table() as client:
        wrapped = Faulty(client)
        yield wrapped, DynamoDbMemoryStore(lambda: wrapped, "memory", track_index=True)


def batch(tag: str = "wb") -> list[Any]:
    return [record(f"{tag}-{i:03d}", body=f"staged finding {i}", entity_ids=("e1",)) for i in range(SIZE)]


def leftovers(client: Any) -> list[str]:
    """Every sort key but the id counter and the workspace meta (a clean table after a discarded write-back)."""
    items = client.scan(TableName="memory")["Items"]
    return sorted(i["sk"]["S"] for i in items if i["sk"]["S"] not in ("#SEQ", "#META"))


def visible(store: DynamoDbMemoryStore) -> int:
    listed = store.list_memories(MemoryListQuery(WS, limit=500)).items
    found = store.vector_search(scope(), unit(1, 0, 0, 0), 500)
    linked = store.linked_memories(scope(), ["e1"], 500)
    assert len(listed) == len(found) == len(linked)
    return len(listed)


def throttle(_: dict[str, Any]) -> None:
    raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, "TransactWriteItems")


@pytest.mark.parametrize("failing", [2, 3])
def test_a_failure_in_transaction_k_leaves_nothing_behind(faulty: tuple[Faulty, DynamoDbMemoryStore],
                                                          failing: int) -> None:
    client, store = faulty
    # Given the k-th stage transaction fails (k > 1: earlier ones committed their items)
    client.hooks[("transact_write_items", failing)] = throttle
    # When the write-back runs
    with pytest.raises(DomainError):
        store.insert_batch(batch())
    # Then no memory is visible and nothing is left behind: items, name claims, links, markers, the stage record
    assert visible(store) == 0
    assert leftovers(client.client) == []
    # And the same names can be written again, whole
    assert len(store.insert_batch(batch())) == SIZE and visible(store) == SIZE


def test_readers_see_nothing_until_the_commit_then_everything(faulty: tuple[Faulty, DynamoDbMemoryStore]) -> None:
    client, store = faulty
    seen: list[int] = []
    # Given a reader that looks right before the commit flips the stage record (every stage transaction is done)
    client.hooks[("update_item", 2)] = lambda kwargs: seen.append(visible(store))  # 1st update_item: id allocation
    written = store.insert_batch(batch())
    assert seen == [0]
    # Then after it the whole write-back is there, published: no item carries `wb`, the record expires (TTL)
    assert visible(store) == SIZE
    assert store.get(WS, written[-1].memory_id) is not None
    items = client.client.scan(TableName="memory")["Items"]
    assert not [i for i in items if "wb" in i]
    [record] = [i for i in items if i["sk"]["S"].startswith("WB#")]
    assert record["status"]["S"] == "committed" and "ttl" in record


def test_a_commit_whose_answer_was_lost_is_a_success(faulty: tuple[Faulty, DynamoDbMemoryStore]) -> None:
    client, store = faulty

    def commit_then_lose_the_answer(kwargs: dict[str, Any]) -> None:
        client.client.update_item(**kwargs)
        raise ClientError({"Error": {"Code": "InternalServerError", "Message": "injected"}}, "UpdateItem")

    # Given the commit happens but its answer never arrives (a retry would find the condition false)
    client.hooks[("update_item", 2)] = commit_then_lose_the_answer
    written = store.insert_batch(batch())
    # Then the write-back is a success and whole: the record says committed, so nothing was discarded
    assert len(written) == SIZE and visible(store) == SIZE


def test_a_crash_after_the_commit_keeps_the_write_back_whole(faulty: tuple[Faulty, DynamoDbMemoryStore]) -> None:
    client, store = faulty
    # Given the writer dies while publishing (the stage record is committed, the items still carry `wb`)
    client.hooks[("transact_write_items", 4)] = throttle  # the first publish transaction
    written = store.insert_batch(batch())
    # Then readers resolve the items through the committed record: every memory is visible
    assert visible(store) == SIZE and len(store.get_many(WS, [w.memory_id for w in written])) == SIZE
    assert any("wb" in i for i in client.client.scan(TableName="memory")["Items"])


def test_an_abandoned_stage_is_invisible_and_reclaimed_after_its_lease(
        faulty: tuple[Faulty, DynamoDbMemoryStore], monkeypatch: pytest.MonkeyPatch) -> None:
    client, store = faulty

    def crash(_: dict[str, Any]) -> None:
        raise Crash

    # Given a writer that died between its stage transactions (nothing discarded: the process is gone)
    client.hooks[("transact_write_items", 3)] = crash
    with pytest.raises(Crash):
        store.insert_batch(batch())
    # Then its staged memories are invisible
    assert visible(store) == 0 and leftovers(client.client)
    # And a retry within the lease is refused (the writer could still be at work) ...
    with pytest.raises(Conflict):
        store.insert_batch(batch())
    # ... and after the lease it takes the names over: the retry is whole, the abandoned stage gone
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    written = store.insert_batch(batch())
    assert visible(store) == SIZE
    remaining = {int(sk[2:]) for sk in leftovers(client.client) if sk.startswith("M#")}
    assert remaining == {w.memory_id for w in written}
