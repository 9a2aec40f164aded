"""Issue 25: forgetting a principal removes their personal memories (every revision), recall traces, usage events and
keys from every store and index of both engines, with counts; other principals' data stays; the route needs
`api:admin` and a workspace the caller reaches."""

from __future__ import annotations

from typing import Any

from agentkb.cli.main import main
from agentkb.local.events import body_of, rest_event
from testkit.corpus import MEMORY, WS, mint, replay

RECALL = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "project_id": "billing",
          "task_type": "code_review", "query": "vpn rollout friday", "entities": {"repos": []},
          "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": True,
                    "include_stale": False},
          "limits": {"max_items": 5, "max_tokens": 2000, "recency_days": 30},
          "sensitivity": {"contains_code": False, "contains_customer_data": False,
                          "contains_private_meeting_data": False},
          "channel": {"kind": "slack", "id": "C123", "thread_id": None},
          "runtime": {"name": "openclaw", "version": "1.4.0"}}


def _write(key: str, name: str, visibility: str, body: str) -> int:
    memory = {**MEMORY, "name": name, "visibility": visibility, "body": body}
    answer = replay(rest_event("POST", "/v1/memories", memory, key=key))
    assert answer["statusCode"] == 201, answer["body"]
    return int(body_of(answer)["memory_id"])


def _recall(key: str) -> str:
    answer = replay(rest_event("POST", "/ob1/recall", RECALL, key=key))
    assert answer["statusCode"] == 200, answer["body"]
    request_id = str(body_of(answer)["request_id"])
    recalled = [str(m["memory_id"]) for m in _items(body_of(answer))]
    assert recalled
    used = replay(rest_event("POST", f"/ob1/recall/{request_id}/usage", {"used_memory_ids": recalled}, key=key))
    assert used["statusCode"] == 200, used["body"]
    return request_id


def _seed(ports: Any) -> dict[str, Any]:
    alice = mint(ports, [WS], ["api:read", "api:write"], "alice")
    bob = mint(ports, [WS], ["api:read", "api:write"], "bob")
    first = _write(alice, "alice-note", "personal", "The VPN rollout note alice keeps for herself.")
    second = _write(alice, "alice-note", "personal", "The VPN rollout note alice keeps, revised on Friday.")
    shared = _write(alice, "team-vpn", "workspace", "The VPN rollout finishes on Friday for the whole team.")
    bobs = _write(bob, "bob-note", "personal", "Bob's own VPN rollout reminder for Friday.")
    return {"alice": alice, "bob": bob, "alice_ids": [first, second], "shared": shared, "bobs": bobs,
            "alice_trace": _recall(alice), "bob_trace": _recall(bob)}


def test_forget_removes_one_person_and_nothing_else(ports: Any) -> None:
    seeded = _seed(ports.bundle)
    admin = mint(ports.bundle, [WS], ["api:admin"], "ops")
    writer_only = mint(ports.bundle, [WS], ["api:read", "api:write"], "carol")
    elsewhere = mint(ports.bundle, ["other-ws"], ["api:admin"], "ops2")
    def forget(key: str) -> dict[str, Any]:
        return replay(rest_event("DELETE", "/v1/principals/alice", key=key, query={"workspace_id": WS}))

    assert body_of(forget(writer_only))["error"]["code"] == "FORBIDDEN"
    assert body_of(forget(elsewhere))["error"] == {"code": "NOT_FOUND", "message": "Workspace not found"}
    assert ports.memories.get(WS, seeded["alice_ids"][0]) is not None  # refused calls changed nothing

    answer = forget(admin)
    assert answer["statusCode"] == 200, answer["body"]
    removed = body_of(answer)["removed"]
    assert removed["memories"] == 2 and removed["traces"] == 1 and removed["keys"] == 1, removed
    assert removed["usage_events"] >= 1, removed
    assert all(e.memory_id == seeded["shared"] for e in ports.traces.usage_events(WS, 0, 100))  # bob's event only
    assert len(ports.traces.usage_events(WS, 0, 100)) == 1

    assert all(ports.memories.get(WS, i) is None for i in seeded["alice_ids"])
    assert ports.traces.get(seeded["alice_trace"]) is None
    assert ports.memories.get(WS, seeded["shared"]) is not None  # the workspace's, not alice's
    assert ports.memories.get(WS, seeded["bobs"]) is not None
    assert ports.traces.get(seeded["bob_trace"]) is not None
    assert all(k.principal != "alice" for k in ports.keys.list_keys())
    assert replay(rest_event("POST", "/ob1/recall", RECALL, key=seeded["alice"]))["statusCode"] == 401
    recalled = body_of(replay(rest_event("POST", "/ob1/recall", RECALL, key=seeded["bob"])))
    assert str(seeded["shared"]) in [str(m.get("memory_id")) for m in _items(recalled)]  # still recalled by others

    again = body_of(forget(admin))["removed"]
    assert again == dict.fromkeys(removed, 0)  # nothing left to forget


def test_the_cli_forgets_on_the_configured_engine(ports: Any, capsys: Any) -> None:
    seeded = _seed(ports.bundle)
    capsys.readouterr()
    assert main(["forget", "--workspace", WS, "--principal", "bob", "--json"]) == 0
    import json

    removed = json.loads(capsys.readouterr().out)["removed"]
    assert removed["memories"] == 1 and removed["traces"] == 1 and removed["keys"] == 1
    assert ports.memories.get(WS, seeded["bobs"]) is None
    assert all(ports.memories.get(WS, i) is not None for i in seeded["alice_ids"][1:])


def _items(recalled: dict[str, Any]) -> list[dict[str, Any]]:
    for field in ("memories", "items", "results"):
        if isinstance(recalled.get(field), list):
            return list(recalled[field])
    raise AssertionError(f"no memory list in {sorted(recalled)}")
