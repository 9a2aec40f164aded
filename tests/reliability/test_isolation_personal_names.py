"""Issue 18 item 5: a personal memory's name lives in its owner's namespace, so a write by another principal of
the same workspace under that name never supersedes it, never learns of it, and forgetting the writer's memory
forgets the writer's chain only (engine-level cases: tests/contract/ memory namespace tests)."""

from __future__ import annotations

from typing import Any

from agentkb.composition import Ports
from tests.helpers import body_of, mint, rest_event
from tests.ob1_client import Ob1Client, writeback_payload
from tests.reliability.corpus import replay


def _list(key: str) -> list[dict[str, Any]]:
    listed = replay(rest_event("GET", "/v1/memories", query={"workspace_id": "w"}, key=key, resource="/v1/memories"))
    assert listed["statusCode"] == 200
    return list(body_of(listed)["data"])


def test_another_principals_write_never_touches_a_personal_memory(bundle: Ports) -> None:
    alice = mint(bundle, ["w"], ["api:read", "api:write"], "alice")
    bob = mint(bundle, ["w"], ["api:read", "api:write"], "bob")
    personal = {"workspace_id": "w", "visibility": "personal", "type": "note", "name": "mine", "body": "bob's note"}
    assert replay(rest_event("POST", "/v1/memories", personal, key=bob))["statusCode"] == 201
    # When alice writes a workspace memory under the same name
    written = replay(rest_event("POST", "/v1/memories", {**personal, "visibility": "workspace", "body": "alice's"},
                                key=alice))
    # Then it says nothing of bob's memory, and bob's personal memory is still live for him
    assert body_of(written).get("supersedes") is None
    mine = [(m["body"], m["superseded"]) for m in _list(bob) if m["visibility"] == "personal"]
    assert mine == [("bob's note", False)]


def _write(key: str, body: dict[str, Any]) -> dict[str, Any]:
    written = replay(rest_event("POST", "/v1/memories", body, key=key))
    assert written["statusCode"] in (200, 201), written
    return dict(body_of(written))


def test_forgetting_the_shared_memory_leaves_the_personal_one(bundle: Ports) -> None:
    alice = mint(bundle, ["w"], ["api:read", "api:write"], "alice")
    bob = mint(bundle, ["w"], ["api:read", "api:write"], "bob")
    personal = {"workspace_id": "w", "visibility": "personal", "type": "note", "name": "mine", "body": "bob's v1"}
    first = _write(bob, personal)
    second = _write(bob, {**personal, "body": "bob's v2"})
    assert (second["revision"], second["supersedes"]) == (2, first["memory_id"])  # his own chain still revises
    alices = _write(alice, {**personal, "visibility": "workspace", "body": "alice's"})
    forgot = replay(rest_event("DELETE", f"/v1/memories/{alices['memory_id']}", key=alice,
                               query={"workspace_id": "w"}))
    assert forgot["statusCode"] == 204
    assert [(m["body"], m["superseded"]) for m in _list(bob)] == [("bob's v2", False), ("bob's v1", True)]
    assert _list(alice) == []


def test_an_ob1_personal_writeback_stays_its_writers(bundle: Ports) -> None:
    alice = Ob1Client(mint(bundle, ["w"], ["api:read", "api:write"], "alice"))
    bob = Ob1Client(mint(bundle, ["w"], ["api:read", "api:write"], "bob"))
    payload = writeback_payload("w", "p1", project=None, visibility={"workspace": "private"})
    mine = alice.ok("POST", "/writeback", payload)
    theirs = bob.ok("POST", "/writeback", payload)  # the same idempotency key: each writer's own memories
    ids = [m["memory_id"] for m in mine["memories"]]
    assert ids and not set(ids) & {m["memory_id"] for m in theirs["memories"]}
    names = {m["name"] for m in _list(alice.key)}
    assert {m["visibility"] for m in _list(alice.key)} == {"personal"}
    for name in names:  # bob writing shared memories under alice's personal names supersedes none of them
        assert _write(bob.key, {"workspace_id": "w", "visibility": "workspace", "type": "note", "name": name,
                                "body": "bob's"}).get("supersedes") is None
    # her replay answers her own memories, not the shared ones under the same names
    assert [m["memory_id"] for m in alice.ok("POST", "/writeback", payload)["memories"]] == ids
