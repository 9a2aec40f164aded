"""The MemoryStore port's contract for large batches, batched reads and the owner rule, over every engine (embedded
SQLite, DynamoDB alone, DynamoDB + the OpenSearch memory index): the `store` fixture of test_memory_contract.py.

- a batch far past one DynamoDB transaction is written whole, found by every read path (OB1's write-back maximum
  runs end to end on both engines in tests/ob1_flows_limits.py; moto makes it slow here);
- `get_many` answers the existing ones of many ids in one call;
- the owner rule (a personal memory is its owner's) is inside the listing query: a page holds `limit` memories
  and its cursor continues exactly where it stopped, however many personal memories of others lie between.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_memory_contract import ids, scope, store  # noqa: F401 (the engine fixture)

from agentkb.adapters.aws.dynamodb.memory.staging import CHUNK
from agentkb.models.memory.detail import MemoryListQuery
from testkit.moto_aws import one_backup_per_table
from tests.memory_records import WS, record, unit

SIZE = 2 * CHUNK + 5  # three DynamoDB transactions of memories


@pytest.fixture(autouse=True)
def _fast_moto_transactions(monkeypatch: pytest.MonkeyPatch) -> None:
    one_backup_per_table(monkeypatch)  # moto's rollback copy once per table, not per item (aws_backend.py)


def test_a_batch_past_one_transaction_is_written_whole(store: Any) -> None:  # noqa: F811
    # Given more memories than one DynamoDB transaction holds (100 items: 24 memories)
    batch = [record(f"big-{i:03d}", body=f"finding number {i}", entity_ids=("e-shared", f"e-{i % 7}"),
                    embedding=unit(1, i / SIZE, 0, 0)) for i in range(SIZE)]
    # When it is stored as one batch
    written = store.insert_batch(batch)
    # Then every memory is there, in order, through every read: listing, batched reads, recall legs and links
    assert [w.name for w in written] == [r.name for r in batch]
    listed = store.list_memories(MemoryListQuery(WS, limit=SIZE, name_prefix="big-"))
    assert sorted(m.memory_id for m in listed.items) == sorted(w.memory_id for w in written)
    assert listed.next_before_id is None
    got = store.get_many(WS, [w.memory_id for w in written])
    assert [got[w.memory_id].body for w in written] == [r.body for r in batch]
    assert len(store.vector_search(scope(), unit(1, 0, 0, 0), SIZE)) == SIZE
    assert len(store.linked_memories(scope(), ["e-shared"], 1000)) == SIZE
    assert len(ids(store.lexical_search(scope(), "finding", 500))) == SIZE


def test_get_many_answers_the_existing_ones(store: Any) -> None:  # noqa: F811
    written = store.insert_batch([record(f"g{i}") for i in range(5)])
    wanted = [w.memory_id for w in written][::-1] + [10**9]
    got = store.get_many(WS, wanted)
    assert sorted(got) == sorted(w.memory_id for w in written)
    assert got[written[2].memory_id].name == "g2"
    assert store.get_many(WS, []) == {} and store.get_many("elsewhere", wanted) == {}


def test_the_owner_rule_is_inside_the_listing_so_pages_are_full(store: Any) -> None:  # noqa: F811
    # Given alice's workspace memories interleaved with bob's personal ones (two of bob's after each of alice's)
    batch = []
    for i in range(6):
        batch.append(record(f"shared-{i}"))
        batch += [record(f"bob-{i}-{j}", visibility="personal", owner_id="bob") for j in range(2)]
    batch.append(record("alice-own", visibility="personal", owner_id="alice"))
    written = {w.name: w.memory_id for w in store.insert_batch(batch)}
    alice_sees = [written["alice-own"], *(written[f"shared-{i}"] for i in reversed(range(6)))]
    # When alice pages through the listing, 3 at a time
    first = store.list_memories(MemoryListQuery(WS, limit=3, viewer="alice"))
    second = store.list_memories(MemoryListQuery(WS, limit=3, viewer="alice", before_id=first.next_before_id))
    third = store.list_memories(MemoryListQuery(WS, limit=3, viewer="alice", before_id=second.next_before_id))
    # Then every page is full (a filter after the store's page would leave about a third of it) and in order
    pages = [[m.memory_id for m in page.items] for page in (first, second, third)]
    assert pages == [alice_sees[:3], alice_sees[3:6], alice_sees[6:]]
    assert third.next_before_id is None
    assert not any(m.owner_id == "bob" and m.visibility == "personal" for p in (first, second, third) for m in p.items)
    # And bob sees his own, an internal read (no viewer) everything
    bob = store.list_memories(MemoryListQuery(WS, limit=50, viewer="bob"))
    assert written["alice-own"] not in {m.memory_id for m in bob.items} and len(bob.items) == 6 + 12
    assert len(store.list_memories(MemoryListQuery(WS, limit=50)).items) == len(batch)
    # And point reads follow the same rule
    assert store.get(WS, written["bob-0-0"], "alice") is None and store.get(WS, written["bob-0-0"], "bob") is not None
    assert store.get(WS, written["bob-0-0"]) is not None
    assert set(store.get_many(WS, list(written.values()), "alice")) == set(alice_sees)
