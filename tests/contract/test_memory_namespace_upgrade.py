"""Data stored before per-owner memory names keeps working (issue 18 item 5): an embedded database migrates on
open; a DynamoDB table's old-layout personal `N#<name>` claim is taken over by its owner's next revision exactly
once, and moved aside (never superseded) by a shared write of the same name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_engines import memory_table

from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.adapters.aws.dynamodb.tables import key, n
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore
from agentkb.models.memory.detail import MemoryListQuery, name_key
from tests.memory_records import WS, record

BOB = name_key("personal", "bob", "mine")


def _personal(body: str) -> Any:
    return record("mine", body=body, visibility="personal", owner_id="bob", request_hash=f"h-{body}")


def _live(store: Any) -> list[tuple[str, str]]:
    return sorted((m.visibility, m.body) for m in store.list_memories(MemoryListQuery(WS, status="live")).items)


def test_an_embedded_database_of_the_old_layout_migrates_on_open(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite3"
    bob1 = SqliteMemoryStore(Database(path)).insert(_personal("bob v1"))
    old = Database(path).connection()  # back to the layout before name keys: no keys, one index per name
    old.executescript("DROP INDEX memories_live_key; UPDATE memories SET name_key = NULL;"
                      " CREATE UNIQUE INDEX memories_live_name ON memories (workspace_id, name) WHERE superseded = 0;")
    store = SqliteMemoryStore(Database(path))
    indexes = {r[0] for r in store.db.connection().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "memories_live_key" in indexes and "memories_live_name" not in indexes
    assert store.find_live(WS, BOB).memory_id == bob1.memory_id  # type: ignore[union-attr]
    assert store.insert(record("mine", body="alice's")).response["supersedes"] is None
    bob2 = store.insert(_personal("bob v2"))
    assert (bob2.revision, bob2.response["supersedes"]) == (2, bob1.memory_id)
    assert _live(store) == [("personal", "bob v2"), ("workspace", "alice's")]


def _old_layout(client: Any, memory_id: int, revision: int) -> None:
    """Rewrite bob's claim as a table written before per-owner names holds it: `N#mine`, no `O#` claim."""
    client.delete_item(TableName="memory", Key=key(f"MW#{WS}", BOB))
    client.put_item(TableName="memory", Item={**key(f"MW#{WS}", "N#mine"), "memory_id": n(memory_id),
                                              "revision": n(revision)})


def test_the_owners_next_revision_takes_over_an_old_layout_claim_once() -> None:
    with memory_table() as client:
        store = DynamoDbMemoryStore(lambda: client, "memory")
        bob1 = store.insert(_personal("bob v1"))
        _old_layout(client, bob1.memory_id, 1)
        bob2 = store.insert(_personal("bob v2"))
        assert (bob2.revision, bob2.response["supersedes"]) == (2, bob1.memory_id)
        assert store.find_live(WS, "N#mine") is None  # the old claim is gone with the takeover
        assert store.find_live(WS, BOB).memory_id == bob2.memory_id  # type: ignore[union-attr]
        bob3 = store.insert(_personal("bob v3"))
        assert (bob3.revision, bob3.response["supersedes"]) == (3, bob2.memory_id)
        assert _live(store) == [("personal", "bob v3")]


def test_a_shared_write_moves_an_old_layout_personal_claim_aside() -> None:
    with memory_table() as client:
        store = DynamoDbMemoryStore(lambda: client, "memory")
        bob1 = store.insert(_personal("bob v1"))
        _old_layout(client, bob1.memory_id, 1)
        alices = store.insert(record("mine", body="alice's"))
        assert (alices.revision, alices.response["supersedes"]) == (1, None)
        assert store.find_live(WS, BOB).memory_id == bob1.memory_id  # type: ignore[union-attr]
        bob2 = store.insert(_personal("bob v2"))
        assert bob2.response["supersedes"] == bob1.memory_id
        assert _live(store) == [("personal", "bob v2"), ("workspace", "alice's")]
        assert sorted(store.delete(WS, alices.memory_id)) == [alices.memory_id]
        assert _live(store) == [("personal", "bob v2")]


def test_forgetting_a_personal_memory_drops_its_old_layout_claim() -> None:
    with memory_table() as client:
        store = DynamoDbMemoryStore(lambda: client, "memory")
        bob1 = store.insert(_personal("bob v1"))
        _old_layout(client, bob1.memory_id, 1)
        assert store.delete(WS, bob1.memory_id) == [bob1.memory_id]
        assert client.get_item(TableName="memory", Key=key(f"MW#{WS}", "N#mine")).get("Item") is None
        assert store.insert(record("mine", body="alice's")).revision == 1
