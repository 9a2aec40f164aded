"""The memory routes and write surfaces of the ownership properties (test_isolation_owner_props.py): each op runs
one drawn action as its actor and checks what that route must answer; the property checks what no route may do."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentkb.api.routes_table import ROUTES
from tests.helpers import body_of, invoke, rest_event
from tests.ob1_client import Ob1Client, writeback_payload
from tests.reliability.corpus import replay
from tests.reliability.test_isolation_mcp import in_memory_caller
from tests.reliability.test_isolation_owner import RW, assert_refused, personal_view

PRINCIPALS = ("ann", "bob", "cat")
VISIBILITIES = ("personal", "channel", "project", "workspace", "organization")
AUDIENCE = {"channel": {"channel_id": "c1"}, "project": {"project_id": "billing"}}
MISSING = "987654321"
MISSING_TRACE = "0123456789abcdef0123456789abcdef"


def secret(principal: str) -> str:
    return f"secret{principal}"  # only ever in this principal's personal memories


def asked(principal: str) -> str:
    return f"asked{principal}"  # only ever in this principal's recall queries (its traces)


@dataclass
class World:
    keys: dict[str, str]
    traces: dict[str, str]  # principal -> the request id of its personal OB1 recall
    shared: str  # ann's shared memory (an OB1 write-back)
    counter: itertools.count[int] = field(default_factory=itertools.count)


@dataclass(frozen=True)
class Action:
    actor: str
    victim: str
    visibility: str
    name: str
    owner: str  # "omitted", "actor" or "victim"
    review: tuple[str, str | None]  # (action, restrict visibility)
    on_shared: bool  # a review of ann's shared memory instead of the victim's personal one


def ob1_recall(principal: str) -> dict[str, Any]:
    return {"schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": "w", "task_type": "smoke",
            "query": f"{asked(principal)} held note", "runtime": {"name": "hermes"},
            "scope": {"visibility": "personal", "include_unconfirmed": True}}


def view(world: World, principal: str) -> tuple[Any, ...]:
    """What a principal sees of its own: its personal memories, its trace (the items' current memories aside:
    shared memories in them may be reviewed by anyone)."""
    code, trace, _ = Ob1Client(world.keys[principal]).call("GET", f"/recall-traces/{world.traces[principal]}")
    assert code == 200, trace
    items = [{k: v for k, v in item.items() if k != "memory"} for item in trace["items"]]
    return personal_view(world.keys[principal]), trace["trace"], items


def live_id(before: dict[str, tuple[Any, ...]], principal: str, name: str = "held") -> str:
    live = [m[0] for m in before[principal][0] if m[1] == name and not m[4]]
    return str(live[0]) if live else MISSING


Answer = tuple[int, Any]
Op = Callable[[World, Action, dict[str, tuple[Any, ...]]], Answer]


def write_body(world: World, a: Action) -> dict[str, Any]:
    body = {"workspace_id": "w", "visibility": a.visibility, "type": "note", "name": a.name,
            "body": f"written by {a.actor} #{next(world.counter)}", **AUDIENCE.get(a.visibility, {})}
    if a.name == "fresh":
        body["name"] = f"fresh-{next(world.counter)}"
    if a.owner != "omitted":
        body["owner_id"] = a.actor if a.owner == "actor" else a.victim
    return body


def check_write(world: World, a: Action, body: dict[str, Any], answer: Answer, ok: int,
                before: dict[str, tuple[Any, ...]]) -> Answer:
    status, written = answer
    if body.get("owner_id", a.actor) != a.actor:
        assert_refused(status, written)
        assert personal_view(world.keys[a.actor]) == before[a.actor][0]  # nothing stored
        return answer
    assert status == ok, written
    others = {m[0] for p in PRINCIPALS if p != a.actor for m in before[p][0]}
    assert written["supersedes"] not in others  # nothing of anyone else's namespace, shared or not
    if a.visibility == "personal":  # exactly the actor's own chain of that name
        own = [m for m in before[a.actor][0] if m[1] == body["name"] and not m[4]]
        assert (written["supersedes"], written["revision"]) == ((own[0][0], own[0][3] + 1) if own else (None, 1))
    return answer


def http_write(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
    body = write_body(world, a)
    response = replay(rest_event("POST", "/v1/memories", body, key=world.keys[a.actor]))
    return check_write(world, a, body, (response["statusCode"], body_of(response)), 201, before)


def direct_write(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
    body = write_body(world, a)
    response = invoke("ingest", {"operation": "writeMemory", "body": body,
                                 "principal": {"id": a.actor, "workspaces": ["w"], "scopes": RW}})
    return check_write(world, a, body, (response["statusCode"], response["body"]), 201, before)


def mcp_write(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
    body = write_body(world, a)
    status, text = in_memory_caller()(world.keys[a.actor], "POST", "/v1/memories", {}, body)
    return check_write(world, a, body, (status, json.loads(text.split("\n", 1)[0])), 200, before)


def writeback(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
    shared = {"workspace": "private" if a.visibility == "personal" else "shared"}
    payload = writeback_payload("w", f"{a.actor}-{next(world.counter)}", project=None, visibility=shared)
    code, answer, _ = Ob1Client(world.keys[a.actor]).call("POST", "/writeback", payload)
    assert code == 200, answer
    return code, answer


def review(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
    action, visibility = a.review
    request: dict[str, Any] = {"action": action, **({"visibility": visibility} if visibility else {})}
    if action == "edit":
        request["content"] = f"edited by {a.actor} #{next(world.counter)}"
    client = Ob1Client(world.keys[a.actor])
    target = world.shared if a.on_shared else live_id(before, a.victim)
    code, answer, _ = client.call("PATCH", f"/memories/{target}/review", request)
    if not a.on_shared and a.victim != a.actor:
        assert (code, answer) == client.call("PATCH", f"/memories/{MISSING}/review", request)[:2]
    still_shared = int(world.shared) not in {m[0] for m in before["ann"][0]}  # ann has not restricted it yet
    if a.on_shared and action == "restrict_scope" and a.actor != "ann" and still_shared:
        assert_refused(code, answer)  # never into ann's namespace, never handed to the reviewer
    else:
        assert code in (200, 404), answer
    return code, answer


def by_id(method: str, path: str, query: dict[str, str] | None = None) -> Op:
    """A route naming the victim's personal memory: another principal gets exactly the missing id's answer."""

    def call(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
        def at(memory_id: str) -> Answer:
            target = path.format(id=memory_id)
            response = replay(rest_event(method, target, key=world.keys[a.actor], query=query,
                                         resource=next(r.path for r in ROUTES if r.method == method and
                                                       r.pattern.match(target))))
            return response["statusCode"], body_of(response)

        answer = at(live_id(before, a.victim))
        if a.victim != a.actor:
            assert answer == at(MISSING)
        return answer

    return call


def trace_route(usage: bool) -> Op:
    def call(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
        client = Ob1Client(world.keys[a.actor])
        used = [i["memory_id"] for i in before[a.victim][2] if i["returned"]][:1]

        def at(request_id: str) -> Answer:
            if usage:
                return client.call("POST", f"/recall/{request_id}/usage", {"used_memory_ids": used})[:2]
            return client.call("GET", f"/recall-traces/{request_id}")[:2]

        answer = at(world.traces[a.victim])
        if a.victim != a.actor:
            assert answer == at(MISSING_TRACE)
        else:
            assert answer[0] == 200, answer
        return answer

    return call


def reader(method: str, path: str, body: Callable[[str], Any] | None = None,
           query: dict[str, str] | None = None) -> Op:
    def call(world: World, a: Action, before: dict[str, tuple[Any, ...]]) -> Answer:
        response = invoke("recall" if path == "/v1/recall" else "ingest", rest_event(
            method, path, body(a.actor) if body else None, key=world.keys[a.actor], query=query, resource=path))
        assert response["statusCode"] == 200, body_of(response)
        return response["statusCode"], body_of(response)

    return call


def v1_recall(principal: str) -> dict[str, Any]:
    return {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": "w", "task_type": "general",
            "query": f"{asked(principal)} held note", "entities": {}, "limits": {"max_items": 20, "max_tokens": 8000},
            "sensitivity": {"contains_code": False, "contains_customer_data": False,
                            "contains_private_meeting_data": False},
            "scope": {"visibility": "personal", "project_only": False, "include_unconfirmed": True,
                      "include_stale": True}}


W = {"workspace_id": "w"}
OPS: dict[tuple[str, str], Op] = {
    ("writeMemory", "http"): http_write, ("writeMemory", "direct"): direct_write, ("writeMemory", "mcp"): mcp_write,
    ("ob1Writeback", "http"): writeback, ("ob1ReviewMemory", "http"): review,
    ("getMemory", "http"): by_id("GET", "/v1/memories/{id}", W),
    ("deleteMemory", "http"): by_id("DELETE", "/v1/memories/{id}", W),
    ("ob1GetMemory", "http"): by_id("GET", "/ob1/memories/{id}"),
    ("ob1GetRecallTrace", "http"): trace_route(usage=False), ("ob1ReportUsage", "http"): trace_route(usage=True),
    ("listMemories", "http"): reader("GET", "/v1/memories", query=W),
    ("ob1ListMemories", "http"): reader("GET", "/ob1/memories", query=W),
    ("ob1ListMemoriesByBody", "http"): reader("POST", "/ob1/memories/list", lambda _: W),
    ("ob1ReviewQueue", "http"): reader("GET", "/ob1/memories/review", query=W),
    ("ob1ReviewQueueByBody", "http"): reader("POST", "/ob1/memories/review", lambda _: W),
    ("recall", "http"): reader("POST", "/v1/recall", v1_recall),
    ("ob1Recall", "http"): reader("POST", "/ob1/recall", ob1_recall),
}
