"""`agentkb memory repair`'s bulk conversion of old-layout personal name claims on DynamoDB
(dynamodb_memory_layout.py): an unconverted table works, the conversion moves every old claim, resumes where it
stopped and is idempotent, and once the table is marked converted the write path makes one call fewer."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from memory_engines import memory_table

from agentkb.adapters.aws.dynamodb.memory import layout
from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.adapters.aws.dynamodb.tables import key, n
from agentkb.models.memory.detail import MemoryListQuery, name_key
from tests.memory_records import WS, record

OWNERS = ("bob", "carol", "dave")


@pytest.fixture()
def client() -> Iterator[Any]:
    with memory_table() as c:
        yield c


def personal(owner: str, name: str, body: str, ws: str = WS) -> Any:
    return record(name, body=body, visibility="personal", owner_id=owner, workspace_id=ws, request_hash=f"h-{body}")


def to_old_layout(client: Any, ws: str, owner: str, name: str, memory_id: int, revision: int = 1) -> None:
    """The claim as a table written before per-owner names holds it: `N#<name>`, no `O#` claim."""
    client.delete_item(TableName="memory", Key=key(f"MW#{ws}", name_key("personal", owner, name)))
    client.put_item(TableName="memory", Item={**key(f"MW#{ws}", "N#" + name), "memory_id": n(memory_id),
                                              "revision": n(revision)})


def old_table(client: Any) -> dict[tuple[str, str], int]:
    """Three workspaces, each with old-layout personal claims of different owners and one shared memory."""
    store = DynamoDbMemoryStore(lambda: client, "memory")
    ids: dict[tuple[str, str], int] = {}
    for ws in ("ws1", "ws2", "ws3"):
        for owner in OWNERS:
            name = f"{owner}-note"
            ids[(ws, owner)] = store.insert(personal(owner, name, f"{ws} {owner} v1", ws)).memory_id
            to_old_layout(client, ws, owner, name, ids[(ws, owner)])
        store.insert(record("team", body=f"{ws} shared", workspace_id=ws))
    return ids


def claims(client: Any) -> list[str]:
    items = client.scan(TableName="memory")["Items"]
    return sorted(f"{i['pk']['S']}/{i['sk']['S']}" for i in items if i["sk"]["S"].startswith(("N#", "O#")))


def test_an_unconverted_table_keeps_working(client: Any) -> None:
    ids = old_table(client)
    store = DynamoDbMemoryStore(lambda: client, "memory")
    # The owner's next revision supersedes its old-layout memory; a shared write of the same name does not
    bob2 = store.insert(personal("bob", "bob-note", "ws1 bob v2", "ws1"))
    assert bob2.response["supersedes"] == ids[("ws1", "bob")]
    shared = store.insert(record("carol-note", body="ws1 team's", workspace_id="ws1"))
    assert shared.response["supersedes"] is None
    live = sorted(m.body for m in store.list_memories(MemoryListQuery("ws1", status="live")).items)
    assert live == ["ws1 bob v2", "ws1 carol v1", "ws1 dave v1", "ws1 shared", "ws1 team's"]


def test_the_conversion_moves_every_old_claim_resumably_and_is_idempotent(
        client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = old_table(client)
    monkeypatch.setattr(layout, "SCAN_PAGE", 4)  # many Scan pages: the conversion stops and resumes between them
    moved = 0
    for _ in range(100):  # a new process each time: the position lives in the table
        report = DynamoDbMemoryStore(lambda: client, "memory").convert_names(pages=1)
        moved += report.moved
        if report.converted:
            break
        assert report.resumable and not report.left
    assert report.converted and moved == len(ids)
    expected = sorted([f"MW#{ws}/{name_key('personal', o, f'{o}-note')}" for ws, o in ids]
                      + [f"MW#{ws}/N#team" for ws in ("ws1", "ws2", "ws3")])
    assert claims(client) == expected
    # Idempotent: a second run finds the table converted and changes nothing
    again = DynamoDbMemoryStore(lambda: client, "memory").convert_names()
    assert (again.converted, again.moved, again.scanned) == (True, 0, 0) and claims(client) == expected
    # And every chain continues in its owner's namespace
    store = DynamoDbMemoryStore(lambda: client, "memory")
    assert store.insert(personal("dave", "dave-note", "ws2 dave v2", "ws2")).response["supersedes"] == ids[
        ("ws2", "dave")]


def test_a_claim_in_the_way_is_reported_and_the_table_stays_unconverted(client: Any) -> None:
    ids = old_table(client)
    # Given an O# claim already at bob's key in ws1 (an old claim cannot move there)
    client.put_item(TableName="memory", Item={**key("MW#ws1", name_key("personal", "bob", "bob-note")),
                                              "memory_id": n(ids[("ws1", "bob")]), "revision": n(1)})
    report = DynamoDbMemoryStore(lambda: client, "memory").convert_names()
    assert report.left == ["ws1/bob-note"] and not report.converted and report.moved == len(ids) - 1
    # The write path keeps its lazy fallback on such a table
    store = DynamoDbMemoryStore(lambda: client, "memory")
    assert store.names.old_claims_possible()


def counted(client: Any) -> Counter[str]:
    calls: Counter[str] = Counter()
    client.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.update([model.name]))
    return calls


@pytest.mark.parametrize("visibility", ["workspace", "personal"])
def test_after_the_conversion_the_write_path_makes_one_call_fewer(client: Any, visibility: str) -> None:
    # The extra read was: a revision of a shared name (the claimed memory's visibility), and a personal write that
    # finds no O# claim of its name (a first revision: the old N# claim)
    def revise(store: DynamoDbMemoryStore, body: str) -> Counter[str]:
        name = "shared-name" if visibility == "workspace" else f"personal-{body}"
        calls.clear()
        store.insert(record(name, body=body, visibility=visibility, owner_id="bob", request_hash=f"h-{body}"))
        return Counter(calls)

    calls = counted(client)
    before_store = DynamoDbMemoryStore(lambda: client, "memory")
    for body in ("v1", "v2"):  # the first revision of a process reads the layout item once
        revise(before_store, body)
    before = revise(before_store, "v3")
    assert DynamoDbMemoryStore(lambda: client, "memory").convert_names().converted
    after_store = DynamoDbMemoryStore(lambda: client, "memory")
    revise(after_store, "v4")
    after = revise(after_store, "v5")
    assert before["GetItem"] - after["GetItem"] == 1 and sum(before.values()) - sum(after.values()) == 1
