"""OB1 flows at the edges, engine-agnostic (run by tests/handlers/test_ob1_routes.py and
tests/handlers/aws/test_aws_ob1.py):
the largest write-back, and listings whose pages stay full when other principals' personal memories lie between."""

from __future__ import annotations

from typing import Any

from agentkb.models.ob1.api import MAX_WRITEBACK_ROWS
from tests.helpers import body_of, invoke, rest_event
from tests.ob1_client import Ob1Client, recall_payload, writeback_payload
from tests.ob1_flows import RW, Mint, _ids

CATEGORIES = ("decisions", "outputs", "lessons", "constraints", "unresolved_questions", "next_steps", "failures")


def largest_payload(ws: str, run: str, entries: int) -> dict[str, Any]:
    """`entries` distinct findings spread over every payload category (artifacts included)."""
    payload = writeback_payload(ws, run)
    body: dict[str, Any] = {name: [] for name in CATEGORIES}
    body["artifacts"] = []
    for i in range(entries):
        if i % 8 == 7:
            body["artifacts"].append({"kind": "file", "uri": f"repo://big/{run}/{i}.md", "description": f"note {i}"})
        else:
            body[CATEGORIES[i % 8]].append(f"Finding {i} of run {run}: the deploy step {i} needs its own check.")
    payload["memory_payload"] = {**body, "entities": {"topics": ["large write-back"]}}
    return payload


def flow_largest_writeback(mint: Mint) -> None:
    c = Ob1Client(mint(["big"], RW, "big-agent"))
    # OB1's server takes any number of entries; agentkb takes up to MAX_WRITEBACK_ROWS, whole or not at all
    first = c.ok("POST", "/writeback", largest_payload("big", "b1", MAX_WRITEBACK_ROWS))
    assert len(set(_ids(first))) == MAX_WRITEBACK_ROWS
    assert _ids(c.ok("POST", "/writeback", largest_payload("big", "b1", MAX_WRITEBACK_ROWS))) == _ids(first)
    listed = c.ok("GET", f"/memories?workspace_id=big&limit={MAX_WRITEBACK_ROWS}")
    assert sorted(m["memory_id"] for m in listed["memories"]) == sorted(_ids(first))
    code, answer, _ = c.call("POST", "/writeback", largest_payload("big", "b2", MAX_WRITEBACK_ROWS + 1))
    assert code == 400 and answer["error"]["code"] == "BAD_REQUEST"
    assert c.ok("GET", "/memories?workspace_id=big&limit=200&task_id_prefix=smoke-b2")["count"] == 0
    recall = c.ok("POST", "/recall", recall_payload("big", "b1", True, query="the deploy step needs its own check"))
    assert set(_ids(recall)) <= set(_ids(first)) and _ids(recall)


def flow_owner_paging(mint: Mint) -> None:
    alice_key = mint(["own"], RW, "alice")
    alice, bob = Ob1Client(alice_key), Ob1Client(mint(["own"], RW, "bob"))
    shared = {"workspace": "shared", "project": "none", "channel": "none"}
    mine: list[str] = []
    for run in ("a1", "a2"):  # alice's shared pairs, each followed by ten of bob's personal memories
        mine += _ids(alice.ok("POST", "/writeback", {**two_findings("own", run), "visibility": shared}))
        bob.ok("POST", "/writeback", {**largest_payload("own", f"bob-{run}", 10), "project_id": None,
                                      "visibility": {"workspace": "private"}})
    newest_first = sorted((int(i) for i in mine), reverse=True)

    def page(query: dict[str, str]) -> Any:
        response = invoke("ingest", rest_event("GET", "/v1/memories", key=alice_key,
                                               query={"workspace_id": "own", **query}))
        assert response["statusCode"] == 200
        return body_of(response)

    first = page({"limit": "2"})
    assert [m["memory_id"] for m in first["data"]] == newest_first[:2]  # full, though bob's 10 are newer
    rest = page({"limit": "2", "cursor": first["nextCursor"]})
    assert [m["memory_id"] for m in rest["data"]] == newest_first[2:] and rest["nextCursor"] is None
    listed = alice.ok("GET", "/memories?workspace_id=own&limit=3")
    assert [int(m["memory_id"]) for m in listed["memories"]] == newest_first[:3]
    assert bob.ok("GET", "/memories?workspace_id=own&limit=50")["count"] == 24


def two_findings(ws: str, run: str) -> dict[str, Any]:
    payload = writeback_payload(ws, run, project=None)
    payload["memory_payload"] = {"decisions": [f"Shared decision of {run}."], "lessons": [f"Shared lesson of {run}."]}
    return payload
