"""The MemoryStore port's contract, one suite over every engine: embedded SQLite, DynamoDB alone (moto), and
DynamoDB + the OpenSearch memory index (moto + the in-memory fake OpenSearch).

Same inputs, same answers: writes and revisions, idempotency, the all-or-nothing batch, the recall legs under
eligibility, listing with filters and paging, in-place changes (seen by the next recall) and forgetting.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from memory_engines import FakeOpenSearch, memory_table

from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.adapters.aws.opensearch.indexed_memory import IndexedMemoryStore
from agentkb.adapters.aws.opensearch.memory import OpenSearchMemoryIndex
from agentkb.adapters.aws.opensearch.transport import JsonClient
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore
from agentkb.errors import Conflict
from agentkb.models.memory.api import VISIBILITY_RANK, IdempotencyRecord
from agentkb.models.memory.detail import MemoryChange, MemoryListQuery
from agentkb.models.recall.api import RecallScope
from tests import memory_records
from tests.memory_records import NOW, WS, record, unit

ENGINES = ("embedded", "dynamodb", "dynamodb+opensearch")


def scope(**fields: Any) -> RecallScope:
    return memory_records.scope(**{"audience_rank": VISIBILITY_RANK["workspace"], **fields})


class Clock:
    def __call__(self) -> float:
        return NOW


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "embedded":
        yield SqliteMemoryStore(Database(tmp_path / "memory.sqlite3"))
        return
    with memory_table() as client:
        truth = DynamoDbMemoryStore(lambda: client, "memory")
        if request.param == "dynamodb":
            yield truth
            return
        index = OpenSearchMemoryIndex(JsonClient(FakeOpenSearch(), sleep=lambda _: None), prefix="agentkb",
                                      generation="classic")
        yield IndexedMemoryStore(truth, index, clock=Clock())


def ids(hits: list[tuple[int, float]]) -> list[int]:
    return [i for i, _ in hits]


def test_revisions_supersede_and_idempotency_keys_are_single_use(store: Any) -> None:
    first = store.insert(record("deploy"), IdempotencyRecord("alice", "k1", "b1"))
    second = store.insert(record("deploy", body="deploy notes v2"))
    assert (second.revision, second.response["supersedes"]) == (2, first.memory_id)
    assert store.find_live(WS, "N#deploy").memory_id == second.memory_id
    assert store.find_idempotent(WS, "alice", "k1")[0] == "b1"
    with pytest.raises(Conflict):
        store.insert(record("other"), IdempotencyRecord("alice", "k1", "b2"))
    assert ids(store.vector_search(scope(), unit(1, 0, 0, 0), 5)) == [second.memory_id]
    assert set(ids(store.vector_search(scope(include_stale=True), unit(1, 0, 0, 0), 5))) == \
        {first.memory_id, second.memory_id}


def test_a_batch_is_all_or_nothing(store: Any) -> None:
    store.insert(record("taken"))
    with pytest.raises(Conflict):
        store.insert_batch([record("fresh-1"), record("taken")])
    assert store.find_live(WS, "N#fresh-1") is None
    assert store.list_memories(MemoryListQuery(WS)).items[0].name == "taken"
    written = store.insert_batch([record("fresh-1", labels={"review_status": "pending"}, extra={"a": [1]}),
                                  record("fresh-2", embedding=unit(0, 1, 0, 0))])
    assert [w.name for w in written] == ["fresh-1", "fresh-2"]
    got = store.get(WS, written[0].memory_id)
    assert (got.labels, got.extra, got.body) == ({"review_status": "pending"}, {"a": [1]}, "deploy notes")
    assert ids(store.vector_search(scope(), unit(0, 1, 0, 0), 1)) == [written[1].memory_id]


def test_listing_filters_and_pages_newest_first(store: Any) -> None:
    written = store.insert_batch([record(f"m{i}", type="decision" if i % 2 else "note", project_id="p1" if i < 4
                                         else None, labels={"task_id": f"task-{i // 3}", "runtime": "hermes"})
                                  for i in range(7)])
    all_ids = [w.memory_id for w in reversed(written)]
    page = store.list_memories(MemoryListQuery(WS, limit=3))
    assert [m.memory_id for m in page.items] == all_ids[:3] and page.next_before_id == all_ids[2]
    rest = store.list_memories(MemoryListQuery(WS, limit=10, before_id=page.next_before_id))
    assert [m.memory_id for m in rest.items] == all_ids[3:] and rest.next_before_id is None
    decisions = store.list_memories(MemoryListQuery(WS, type="decision", project_id="p1"))
    assert [m.name for m in decisions.items] == ["m3", "m1"]
    by_label = store.list_memories(MemoryListQuery(WS, labels={"runtime": "hermes"}, label_prefix=("task_id",
                                                                                                  "task-1")))
    assert [m.name for m in by_label.items] == ["m5", "m4", "m3"]
    assert store.list_memories(MemoryListQuery(WS, name_prefix="m6")).items[0].name == "m6"
    assert store.list_memories(MemoryListQuery("other")).items == []


def test_changes_are_seen_by_the_next_recall(store: Any) -> None:
    pending = store.insert_batch([record("pending", confirmed=False, embedding=unit(1, 0, 0, 0)),
                                  record("other", embedding=unit(0, 1, 0, 0))])[0].memory_id
    assert pending not in ids(store.vector_search(scope(), unit(1, 0, 0, 0), 5))
    store.update(WS, pending, MemoryChange(confirmed=True, labels={"review_status": "confirmed"}))
    assert ids(store.vector_search(scope(), unit(1, 0, 0, 0), 1)) == [pending]
    edited = store.update(WS, pending, MemoryChange(body="rollback runbook for billing", embedding=unit(0, 0, 1, 0)))
    assert edited.body == "rollback runbook for billing" and edited.labels == {"review_status": "confirmed"}
    assert ids(store.vector_search(scope(), unit(0, 0, 1, 0), 1)) == [pending]
    assert ids(store.lexical_search(scope(), "rollback", 5)) == [pending]
    store.update(WS, pending, MemoryChange(stale=True))
    assert pending not in ids(store.vector_search(scope(), unit(0, 0, 1, 0), 5))
    store.update(WS, pending, MemoryChange(stale=False, visibility="personal", owner_id="bob"))
    assert pending not in ids(store.vector_search(scope(audience_rank=0), unit(0, 0, 1, 0), 5))
    assert pending in ids(store.vector_search(scope(audience_rank=0, principal_id="bob"), unit(0, 0, 1, 0), 5))
    assert store.update(WS, 999_999, MemoryChange(stale=True)) is None


def test_forgetting_removes_every_revision_link_and_key(store: Any) -> None:
    first = store.insert(record("secret plan", body="launch codes", entity_ids=("e1",)),
                         IdempotencyRecord("alice", "k", "b"))
    second = store.insert(record("secret plan", body="launch codes v2", entity_ids=("e1",)))
    keep = store.insert(record("keep", entity_ids=("e1",)))
    assert sorted(store.delete(WS, second.memory_id)) == sorted([first.memory_id, second.memory_id])
    wide = scope(include_stale=True, include_unconfirmed=True)
    for search in (lambda: ids(store.vector_search(wide, unit(1, 0, 0, 0), 10)),
                   lambda: ids(store.lexical_search(wide, "launch codes deploy", 10)),
                   lambda: [m for m, _ in store.linked_memories(wide, ["e1"], 10)]):
        assert search() == [keep.memory_id]
    assert store.get(WS, first.memory_id) is None and store.find_live(WS, "N#secret plan") is None
    assert store.find_idempotent(WS, "alice", "k") is None
    assert store.entity_links(WS, [first.memory_id, second.memory_id]) == {}
    assert store.delete(WS, second.memory_id) == []
    again: Callable[[], Any] = lambda: store.insert(record("secret plan", body="new"))  # noqa: E731
    assert again().revision == 1
