"""Issue 18 item 5: a personal memory's name lives in its owner's namespace, so a write by another principal of
the same workspace under that name never supersedes it, never learns of it, and forgetting the writer's memory
forgets the writer's chain only (engine-level cases: tests/contract/ memory namespace tests)."""

from __future__ import annotations

from typing import Any

from tests.helpers import body_of, mint, rest_event
from tests.reliability.corpus import replay


def _list(key: str) -> list[dict[str, Any]]:
    listed = replay(rest_event("GET", "/v1/memories", query={"workspace_id": "w"}, key=key, resource="/v1/memories"))
    assert listed["statusCode"] == 200
    return list(body_of(listed)["data"])


def test_another_principals_write_never_touches_a_personal_memory(container: Any) -> None:
    alice = mint(container, ["w"], ["api:read", "api:write"], "alice")
    bob = mint(container, ["w"], ["api:read", "api:write"], "bob")
    personal = {"workspace_id": "w", "visibility": "personal", "type": "note", "name": "mine", "body": "bob's note"}
    assert replay(rest_event("POST", "/v1/memories", personal, key=bob))["statusCode"] == 201
    # When alice writes a workspace memory under the same name
    written = replay(rest_event("POST", "/v1/memories", {**personal, "visibility": "workspace", "body": "alice's"},
                                key=alice))
    # Then it says nothing of bob's memory, and bob's personal memory is still live for him
    assert body_of(written).get("supersedes") is None
    mine = [(m["body"], m["superseded"]) for m in _list(bob) if m["visibility"] == "personal"]
    assert mine == [("bob's note", False)]
