"""Memory names in their namespaces (issue 18 item 5), on every engine (the `store` fixture of
test_memory_contract.py): a personal name is its owner's alone, shared visibilities share the workspace's.

A write supersedes only the live memory of its own namespace key, forgetting forgets that chain only, recall finds
each principal's own, and batches (OB1 write-backs) claim names in the writer's namespace."""

from __future__ import annotations

from typing import Any

import pytest
from test_memory_contract import ids, scope, store  # noqa: F401 (the engine fixture)

from agentkb.errors import Conflict
from agentkb.models.memory.detail import MemoryChange, MemoryListQuery, name_key
from tests.memory_records import WS, record, unit


def _personal(owner: str, body: str, name: str = "mine", **fields: Any) -> Any:
    fields = {"request_hash": f"h-{owner}-{body}", **fields}
    return record(name, body=body, visibility="personal", owner_id=owner, **fields)


def _live(store: Any) -> list[tuple[str, str | None, str]]:  # noqa: F811
    page = store.list_memories(MemoryListQuery(WS, status="live"))
    return sorted((m.visibility, m.owner_id, m.body) for m in page.items)


def test_the_key_encodes_the_namespace_unambiguously() -> None:
    assert name_key("workspace", "alice", "mine") == name_key("project", None, "mine") == "N#mine"
    assert name_key("personal", "bob", "mine") != name_key("personal", "bo", "bmine")
    assert name_key("personal", "bob", "mine") not in {name_key("channel", None, name_key("personal", "bob", "mine"))}


def test_a_shared_write_never_supersedes_a_personal_memory(store: Any) -> None:  # noqa: F811
    bobs = store.insert(_personal("bob", "bob's note"))
    alices = store.insert(record("mine", body="alice's note"))
    assert (alices.revision, alices.response["supersedes"]) == (1, None)
    assert store.find_live(WS, name_key("personal", "bob", "mine")).memory_id == bobs.memory_id
    assert store.find_live(WS, "N#mine").memory_id == alices.memory_id
    assert _live(store) == [("personal", "bob", "bob's note"), ("workspace", "alice", "alice's note")]


def test_a_personal_write_supersedes_its_owners_chain_only(store: Any) -> None:  # noqa: F811
    shared = store.insert(record("mine", body="the team's"))
    bob1 = store.insert(_personal("bob", "bob v1"))
    carol = store.insert(_personal("carol", "carol's"))
    bob2 = store.insert(_personal("bob", "bob v2"))
    assert (bob1.revision, carol.revision) == (1, 1)
    assert (bob2.revision, bob2.response["supersedes"]) == (2, bob1.memory_id)
    assert store.find_live(WS, "N#mine").memory_id == shared.memory_id
    assert _live(store) == [("personal", "bob", "bob v2"), ("personal", "carol", "carol's"),
                            ("workspace", "alice", "the team's")]


def test_forgetting_a_shared_memory_leaves_the_personal_one_of_the_same_name(store: Any) -> None:  # noqa: F811
    bobs = store.insert(_personal("bob", "bob's note", embedding=unit(0, 1, 0, 0)))
    alice1 = store.insert(record("mine", body="alice's note"))
    alice2 = store.insert(record("mine", body="alice's note v2"))
    assert sorted(store.delete(WS, alice2.memory_id)) == sorted([alice1.memory_id, alice2.memory_id])
    assert store.get(WS, bobs.memory_id) is not None
    assert store.find_live(WS, name_key("personal", "bob", "mine")).memory_id == bobs.memory_id
    assert store.delete(WS, bobs.memory_id) == [bobs.memory_id]
    assert store.insert(_personal("bob", "bob again")).revision == 1


def test_recall_finds_each_principals_own(store: Any) -> None:  # noqa: F811
    bobs = store.insert(_personal("bob", "bob's note"))
    alices = store.insert(record("mine", body="alice's note"))
    for principal, expected in (("bob", {bobs.memory_id, alices.memory_id}), ("alice", {alices.memory_id}),
                                ("carol", {alices.memory_id})):
        found = ids(store.vector_search(scope(audience_rank=0, principal_id=principal), unit(1, 0, 0, 0), 10))
        assert set(found) == expected


def test_batches_claim_names_in_the_writers_namespace(store: Any) -> None:  # noqa: F811
    store.insert(_personal("bob", "bob's"))
    written = store.insert_batch([_personal("alice", "alice's", request_hash="a"), record("mine", body="shared")])
    assert [w.revision for w in written] == [1, 1]
    with pytest.raises(Conflict):
        store.insert_batch([_personal("alice", "again", name="other"), _personal("alice", "taken")])
    assert store.find_live(WS, name_key("personal", "alice", "other")) is None
    assert len(_live(store)) == 3


def test_a_change_of_visibility_moves_the_name_to_its_new_namespace(store: Any) -> None:  # noqa: F811
    bobs = store.insert(_personal("bob", "bob's note"))
    store.update(WS, bobs.memory_id, MemoryChange(visibility="workspace"))
    assert store.find_live(WS, "N#mine").memory_id == bobs.memory_id
    assert store.find_live(WS, name_key("personal", "bob", "mine")) is None
    assert store.insert(record("mine", body="alice's")).response["supersedes"] == bobs.memory_id
    carols = store.insert(_personal("carol", "carol's"))
    with pytest.raises(Conflict):  # the shared name is live: carol's memory cannot move onto it
        store.update(WS, carols.memory_id, MemoryChange(visibility="workspace"))
    assert store.get(WS, carols.memory_id).visibility == "personal"
    store.update(WS, carols.memory_id, MemoryChange(owner_id="dave"))
    assert store.find_live(WS, name_key("personal", "dave", "mine")).memory_id == carols.memory_id
    assert store.insert(_personal("carol", "carol's new")).revision == 1
