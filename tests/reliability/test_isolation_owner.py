"""Issue 23 item 1, the red team's findings against `agentkb serve` (2026-12-01), on both engines (embedded through
the handlers; DynamoDB + the fake OpenSearch under moto): a principal writes only its own personal memories, on
every write surface, and a recall trace is its recaller's alone. The properties over principals x visibilities x
every memory route: test_isolation_owner_props.py."""

from __future__ import annotations

import json
from typing import Any

from agentkb.models.recall.trace import encode_trace
from tests.contract.port_engines import EnginePorts
from tests.helpers import body_of, invoke, mint, rest_event
from tests.ob1_client import Ob1Client, writeback_payload
from tests.reliability.corpus import replay

RW = ["api:read", "api:write"]
PLAN = {"workspace_id": "w", "visibility": "personal", "type": "decision", "name": "p1-plan",
        "body": "P1 ships the billing cutover on Friday."}
SPOOF = {**PLAN, "body": "P2 says the cutover is cancelled."}


def keys(ports: EnginePorts) -> tuple[str, str]:
    return mint(ports, ["w"], RW, "p1"), mint(ports, ["w"], RW, "p2")


def write(key: str, body: dict[str, Any]) -> tuple[int, Any]:
    written = replay(rest_event("POST", "/v1/memories", body, key=key))
    return written["statusCode"], body_of(written)


def personal_view(key: str) -> list[tuple[Any, ...]]:
    """The caller's personal memories as it lists them."""
    listed = replay(rest_event("GET", "/v1/memories", query={"workspace_id": "w"}, key=key, resource="/v1/memories"))
    assert listed["statusCode"] == 200
    return [(m["memory_id"], m["name"], m["body"], m["revision"], m["superseded"], m["owner_id"])
            for m in body_of(listed)["data"] if m["visibility"] == "personal"]


def personal_recall(key: str, query: str) -> str:
    recall = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": "w", "query": query,
              "task_type": "general", "entities": {}, "limits": {"max_items": 10, "max_tokens": 4000},
              "sensitivity": {"contains_code": False, "contains_customer_data": False,
                              "contains_private_meeting_data": False},
              "scope": {"visibility": "personal", "project_only": False, "include_unconfirmed": True,
                        "include_stale": False}}
    answer = replay(rest_event("POST", "/v1/recall", recall, key=key))
    assert answer["statusCode"] == 200, body_of(answer)
    return json.dumps(body_of(answer))


def assert_refused(status: int, answer: Any) -> None:
    assert status == 403, answer
    assert answer["error"]["code"] == "FORBIDDEN" and answer["error"]["details"]["code"] == "OWNER_MISMATCH", answer


def test_another_principal_cannot_overwrite_a_personal_memory(ports: EnginePorts) -> None:
    p1, p2 = keys(ports)
    status, mine = write(p1, PLAN)
    assert status == 201
    before = personal_view(p1)
    # When P2 writes a personal memory of P1's name and names P1 as its owner
    status, answer = write(p2, {**SPOOF, "owner_id": "p1"})
    # Then it is refused, nothing is stored, and P1's own recall still answers P1's text
    assert_refused(status, answer)
    assert personal_view(p1) == before and personal_view(p2) == []
    recalled = personal_recall(p1, "billing cutover Friday")
    assert "P1 ships" in recalled and "P2 says" not in recalled
    assert write(p1, {**PLAN, "body": "P1 moved the cutover to Monday."})[1]["supersedes"] == mine["memory_id"]


def test_the_spoof_through_the_local_gateway_is_refused(ports: EnginePorts) -> None:
    from agentkb.local.server import dispatch, to_rest_event

    # The red team's request as `agentkb serve` turns it into an event (its HTTP server is tests/e2e's concern)
    p1, p2 = keys(ports)
    assert write(p1, PLAN)[0] == 201
    before = personal_view(p1)
    event = to_rest_event("POST", "/v1/memories", {"content-type": "application/json", "x-api-key": p2},
                          json.dumps({**SPOOF, "owner_id": "p1"}).encode())
    answer = dispatch(event)
    assert_refused(answer["statusCode"], body_of(answer))
    assert personal_view(p1) == before


def test_a_refused_write_says_nothing_of_another_principals_names(ports: EnginePorts) -> None:
    p1, p2 = keys(ports)
    assert write(p1, PLAN)[0] == 201
    held = write(p2, {**SPOOF, "owner_id": "p1"})
    free = write(p2, {**SPOOF, "owner_id": "p1", "name": "nobody-holds-this"})
    assert_refused(*held)
    assert held[1] == free[1]  # the same answer whether P1 holds the name or not
    # P2's own personal write of that name is a chain of its own: revision 1, superseding nothing
    status, own = write(p2, SPOOF)
    assert status == 201 and (own["revision"], own["supersedes"]) == (1, None)


def test_owner_id_omitted_or_the_callers_own_is_accepted_on_every_visibility(ports: EnginePorts) -> None:
    p1, p2 = keys(ports)
    for visibility, extra in (("workspace", {}), ("project", {"project_id": "billing"}),
                              ("channel", {"channel_id": "c1"}), ("organization", {})):
        shared = {**PLAN, **extra, "visibility": visibility, "name": f"{visibility}-plan"}
        assert_refused(*write(p2, {**shared, "owner_id": "p1"}))  # attributing a write to another: refused
        assert write(p2, {**shared, "owner_id": "p2"})[0] == 201
    status, own = write(p1, {**PLAN, "owner_id": "p1"})
    assert status == 201 and personal_view(p1)[0][5] == "p1"


def test_a_direct_caller_writes_only_as_its_principal(ports: EnginePorts) -> None:
    p1, _ = keys(ports)
    assert write(p1, PLAN)[0] == 201
    before = personal_view(p1)
    for principal in ({"id": "p2", "workspaces": ["w"], "scopes": RW}, None):  # None: the service itself
        event: dict[str, Any] = {"operation": "writeMemory", "body": {**SPOOF, "owner_id": "p1"}}
        if principal:
            event["principal"] = principal
        answer = invoke("ingest", event)
        assert_refused(answer["statusCode"], answer["body"])
    own = invoke("ingest", {"operation": "writeMemory", "body": {**SPOOF, "owner_id": "p2"},
                            "principal": {"id": "p2", "workspaces": ["w"], "scopes": RW}})
    assert own["statusCode"] == 201 and (own["body"]["revision"], own["body"]["supersedes"]) == (1, None)
    assert personal_view(p1) == before


def test_a_reviewer_cannot_move_a_memory_into_another_principals_namespace(ports: EnginePorts) -> None:
    p1, p2 = keys(ports)
    writer, reviewer = Ob1Client(p1), Ob1Client(p2)
    shared = writer.ok("POST", "/writeback", writeback_payload("w", "rt", project=None,
                                                               visibility={"workspace": "shared"}))
    target = shared["memories"][0]["memory_id"]
    before = personal_view(p1)
    # When P2 edits P1's shared memory and restricts it to personal (restrict_scope's default audience)
    edited = reviewer.ok("PATCH", f"/memories/{target}/review", {"action": "edit", "content": "P2's words."})
    code, answer, _ = reviewer.call("PATCH", f"/memories/{target}/review", {"action": "restrict_scope"})
    # Then it is refused: P2's words never land in P1's personal namespace, and the memory stays shared
    assert_refused(code, answer)
    assert answer["error"]["details"]["path"] == "visibility"
    assert personal_view(p1) == before and edited["memory"]["visibility"] == "workspace"
    assert reviewer.ok("GET", f"/memories/{target}")["memory"]["visibility"] == "workspace"
    # Its writer may restrict it: then it is the writer's own
    assert writer.ok("PATCH", f"/memories/{target}/review", {"action": "restrict"})["memory"]["visibility"] == \
        "personal"
    assert [m[0] for m in personal_view(p1)] == [int(target)] and reviewer.call("GET", f"/memories/{target}")[0] == 404


def _personal_trace(p1: Ob1Client) -> str:
    assert p1.ok("POST", "/writeback", writeback_payload("w", "tr", project=None))["memories"]
    recall = {"schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": "w", "task_type": "smoke",
              "query": "agent memory smoke governed memory", "runtime": {"name": "hermes"},
              "scope": {"visibility": "personal", "include_unconfirmed": True}}
    recalled = p1.ok("POST", "/recall", recall)
    assert recalled["memories"]
    return str(recalled["request_id"])


def test_a_personal_recalls_trace_is_the_same_404_as_a_missing_one_for_others(ports: EnginePorts) -> None:
    p1, p2 = (Ob1Client(k) for k in keys(ports))
    request_id = _personal_trace(p1)
    mine = p1.ok("GET", f"/recall-traces/{request_id}")
    assert mine["trace"]["query"] and mine["items"]
    theirs = p2.call("GET", f"/recall-traces/{request_id}")
    missing = p2.call("GET", "/recall-traces/0123456789abcdef0123456789abcdef")
    assert theirs[0] == 404 and theirs[:2] == missing[:2]
    assert p1.ok("GET", f"/recall-traces/{request_id}") == mine


def test_usage_on_another_principals_trace_is_a_missing_trace_and_changes_nothing(ports: EnginePorts) -> None:
    p1, p2 = (Ob1Client(k) for k in keys(ports))
    request_id = _personal_trace(p1)
    mine = p1.ok("GET", f"/recall-traces/{request_id}")
    returned = [i["memory_id"] for i in mine["items"] if i["returned"]]
    report = {"used_memory_ids": returned[:1], "ignored": [{"memory_id": i, "reason": "x"} for i in returned[1:]]}
    theirs = p2.call("POST", f"/recall/{request_id}/usage", report)
    missing = p2.call("POST", "/recall/0123456789abcdef0123456789abcdef/usage", report)
    assert theirs[0] == 404 and theirs[:2] == missing[:2]
    after = p1.ok("GET", f"/recall-traces/{request_id}")
    assert after == mine and after["trace"]["usage_reported_at"] is None  # nothing recorded, no feedback moved
    assert p1.ok("POST", f"/recall/{request_id}/usage", report)["recorded"] == len(returned)


def store_raw_trace(ports: EnginePorts, request_id: str, text: str) -> None:
    """A trace row/item exactly as the engine stores one, with the JSON given (what an older version wrote)."""
    if ports.engine == "embedded":
        ports.traces.db.connection().execute("INSERT INTO recall_traces VALUES (?, 'w', 0, ?)", (request_id, text))
        return
    ports.traces.client.put_item(TableName=ports.traces.table, Item={
        "pk": {"S": f"RT#{request_id}"}, "sk": {"S": "#TRACE"}, "workspace_id": {"S": "w"}, "trace": {"S": text}})


def test_a_trace_stored_without_its_principal_is_nobodys(ports: EnginePorts) -> None:
    p1, p2 = (Ob1Client(k) for k in keys(ports))
    request_id = _personal_trace(p1)
    stored = ports.traces.get(request_id)
    assert stored is not None and stored.principal_id == "p1"  # the engine keeps who recalled
    # A trace of the shape stored before traces named their principal (no principal_id member)
    legacy = json.loads(encode_trace(stored))
    del legacy["principal_id"]
    store_raw_trace(ports, "legacy0000", json.dumps(legacy))
    for client in (p1, p2):  # readable by nobody: the same 404 as a missing trace, for usage too
        assert client.call("GET", "/recall-traces/legacy0000")[:2] == client.call("GET", "/recall-traces/nope")[:2]
        assert client.call("POST", "/recall/legacy0000/usage", {"used_memory_ids": []})[:2] == \
            client.call("POST", "/recall/nope/usage", {"used_memory_ids": []})[:2]
