"""OB1 client flows, engine-agnostic: tests/handlers/test_ob1_routes.py runs them on the embedded engine and
tests/handlers/aws/test_aws_ob1.py on the AWS adapters (moto + the fake OpenSearch + a fake Bedrock)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkb.services.recall.usage_feedback import FEEDBACK_CAP
from tests.helpers import body_of, invoke, rest_event
from tests.ob1_client import Ob1Client, hermes_recall, hermes_writeback, recall_payload, writeback_payload

Mint = Callable[[list[str], list[str], str], str]  # (workspaces, scopes, principal) -> key
RW = ["api:read", "api:write"]


def _ids(body: Any) -> list[str]:
    return [m["memory_id"] for m in body["memories"]]


def flow_smoke(mint: Mint) -> None:
    """OB1's live smoke sequence, with the checks it makes and the ones it leaves out."""
    c = Ob1Client(mint(["ob1"], RW, "agent"))
    assert c.ok("GET", "/health")["ok"] is True
    written = c.ok("POST", "/writeback", writeback_payload("ob1", "r1"))
    assert written["schema_version"] == "openbrain.openclaw.writeback_response.v1"
    ids = _ids(written)
    assert len(ids) == 5  # an output, a lesson, a constraint, a next step and an artifact reference
    assert all(m["use_policy"] == {"can_use_as_instruction": False, "can_use_as_evidence": True,
                                   "requires_user_confirmation": True} for m in written["memories"])
    listed = c.ok("GET", "/memories?workspace_id=ob1&project_id=smoke-project&task_id_prefix=smoke-r1&limit=20")
    assert listed["count"] == 5 and set(_ids(listed)) == set(ids)
    gated = c.ok("POST", "/recall", recall_payload("ob1", "r1", include_unconfirmed=False))
    assert gated["schema_version"] == "openbrain.openclaw.recall_response.v1" and gated["request_id"]
    assert not set(_ids(gated)) & set(ids)
    inclusive = c.ok("POST", "/recall", recall_payload("ob1", "r1", include_unconfirmed=True))
    recalled = _ids(inclusive)
    assert set(recalled) == set(ids)
    used, ignored = recalled[0], recalled[1:3]
    usage = {"used_memory_ids": [used], "ignored": [{"memory_id": i, "reason": "not needed"} for i in ignored]}
    assert c.ok("POST", f"/recall/{inclusive['request_id']}/usage", usage)["ok"] is True
    trace = c.ok("GET", f"/recall-traces/{inclusive['request_id']}")
    by_id = {item["memory_id"]: item for item in trace["items"]}
    assert by_id[used]["used"] is True and all(by_id[i]["used"] is False for i in ignored)
    assert trace["trace"]["request_payload"]["task_type"] == "smoke" and trace["trace"]["candidate_count"] >= 5
    reviewed = c.ok("PATCH", f"/memories/{ids[0]}/review", {"action": "evidence_only", "actor_label": "smoke",
                                                              "notes": "run r1", "reviewer": "extra is ignored"})
    assert reviewed["memory"]["review_status"] == "evidence_only"
    assert reviewed["memory"]["can_use_as_instruction"] is False
    inspected = c.ok("GET", f"/memories/{ids[0]}")["memory"]
    assert inspected["id"] == ids[0] and inspected["source_refs"][0]["uri"] == "repo://smoke/live-smoke.mjs"
    assert [h["action"] for h in inspected["review_history"]] == ["evidence_only"]
    assert inspected["review_history"][0]["before"]["review_status"] == "pending"
    artifact = next(m for m in written["memories"] if m["related_artifacts"])
    assert artifact["related_artifacts"] == [{"kind": "script", "uri": "repo://smoke/live-smoke.mjs"}]
    # Reviewed memories move through the gates of the next recall
    assert _ids(c.ok("POST", "/recall", recall_payload("ob1", "r1", include_unconfirmed=False))) == [ids[0]]
    c.ok("PATCH", f"/memories/{ids[1]}/review", {"action": "confirm"})
    c.ok("PATCH", f"/memories/{ids[0]}/review", {"action": "reject", "notes": "wrong"})
    after = _ids(c.ok("POST", "/recall", recall_payload("ob1", "r1", include_unconfirmed=False)))
    assert after == [ids[1]]
    stale_too = recall_payload("ob1", "r1", include_unconfirmed=False)
    stale_too["scope"]["include_stale"] = True
    assert set(_ids(c.ok("POST", "/recall", stale_too))) == {ids[0], ids[1]}
    queue = c.ok("GET", "/memories/review?workspace_id=ob1&project_id=smoke-project")
    assert set(_ids(queue)) == set(ids[2:])
    hermes_queue = c.ok("POST", "/memories/review", {"workspace_id": "ob1", "project_id": "smoke-project"})
    assert _ids(hermes_queue) == _ids(queue)  # the Hermes plugin's POST forms answer the same
    hermes_list = c.ok("POST", "/memories/list", {"workspace_id": "ob1", "review_status": "confirmed", "limit": 20})
    assert _ids(hermes_list) == [ids[1]]
    unsafe = writeback_payload("ob1", "r1-unsafe", idempotency_key="unsafe-1")
    unsafe["memory_payload"]["outputs"] = ["api_key: sk-or-v1-" + "0" * 40]
    code, body, _ = c.call("POST", "/writeback", unsafe)
    assert code == 422 and body["error"] == "Unsafe write-back blocked" and body["code"] == "UNPROCESSABLE"
    assert {"reason": "api_key", "memory_type": "output", "path": "memory_payload.outputs.0"} in body["unsafe"]
    assert "sk-or-v1" not in str(body)
    assert c.ok("GET", "/memories?workspace_id=ob1")["count"] == 5  # the refused write stored nothing


def flow_idempotent_and_families(mint: Mint) -> None:
    c = Ob1Client(mint(["fam"], RW, "hermes-agent"))
    first = c.ok("POST", "/writeback", writeback_payload("fam", "r2"))
    again = c.ok("POST", "/writeback", writeback_payload("fam", "r2"))
    assert _ids(again) == _ids(first)
    changed = writeback_payload("fam", "r2")
    changed["memory_payload"]["lessons"] = ["a different lesson under the same key"]
    assert _ids(c.ok("POST", "/writeback", changed)) == _ids(first)  # OB1: the key replays the first answer
    assert c.ok("GET", "/memories?workspace_id=fam")["count"] == 5
    h1 = c.ok("POST", "/writeback", hermes_writeback("fam", "Hermes learned the deploy window is Tuesday."))
    h2 = c.ok("POST", "/writeback", hermes_writeback("fam", "Hermes learned the deploy window is Tuesday."))
    assert h1["schema_version"] == "openbrain.agent_memory.writeback_response.v1" and _ids(h1) == _ids(h2)
    assert h1["memories"][0]["scope"]["visibility"] == "personal"
    personal = c.ok("POST", "/recall", hermes_recall("fam", "deploy window Tuesday"))
    assert personal["schema_version"] == "openbrain.agent_memory.recall_response.v1"
    assert _ids(h1)[0] in _ids(personal)
    shared = hermes_recall("fam", "deploy window Tuesday")
    shared["scope"]["visibility"] = "project"
    assert _ids(h1)[0] not in _ids(c.ok("POST", "/recall", shared))  # personal only for personal audiences
    other = Ob1Client(mint(["fam"], RW, "someone-else"))
    assert _ids(h1)[0] not in _ids(other.ok("POST", "/recall", hermes_recall("fam", "deploy window Tuesday")))
    code, body, _ = c.call("POST", "/recall", {**hermes_recall("fam", "x"), "schema_version": "v0"})
    assert code == 400 and body["error"]["code"] == "BAD_REQUEST"


def flow_isolation(mint: Mint) -> None:
    a = Ob1Client(mint(["iso-a"], RW, "a"))
    b = Ob1Client(mint(["iso-b"], RW, "b"))
    written = _ids(a.ok("POST", "/writeback", writeback_payload("iso-a", "r3")))
    recall = a.ok("POST", "/recall", recall_payload("iso-a", "r3", include_unconfirmed=True))
    for method, path, body in (("POST", "/recall", recall_payload("iso-a", "r3", True)),
                               ("POST", "/writeback", writeback_payload("iso-a", "r3b")),
                               ("GET", f"/memories/{written[0]}", None),
                               ("PATCH", f"/memories/{written[0]}/review", {"action": "confirm"}),
                               ("GET", f"/recall-traces/{recall['request_id']}", None),
                               ("POST", f"/recall/{recall['request_id']}/usage", {"used_memory_ids": written}),
                               ("GET", "/memories?workspace_id=iso-a", None)):
        code, answer, _ = b.call(method, path, body)
        assert code == 404 and answer["error"]["code"] == "NOT_FOUND", (method, path, code)
    reader = Ob1Client(mint(["iso-a"], ["api:read"], "reader"), carrier="query")
    assert reader.call("POST", "/recall", recall_payload("iso-a", "r3", True))[0] == 200
    code, answer, _ = reader.call("POST", "/writeback", writeback_payload("iso-a", "r3c"))
    assert code == 403 and answer["error"]["details"]["code"] == "INSUFFICIENT_SCOPE"
    assert Ob1Client("akb_nope_nope").call("GET", "/health")[0] == 401
    assert Ob1Client(a.key, carrier="x-api-key").call("GET", "/health")[0] == 200


def flow_feedback(mint: Mint, key_v1: str | None = None) -> None:
    """Usage moves rank in later recalls of /ob1/recall and /v1/recall, within FEEDBACK_CAP, never past the gates."""
    c = Ob1Client(mint(["fb"], RW, "fb-agent"))
    text = "The billing deploy needs a database migration window on Tuesdays."
    confirmed = {"default_status": "user_confirmed", "confidence": 0.9, "requires_review": False}
    ids = [_ids(c.ok("POST", "/writeback", writeback_payload(
        "fb", f"fb{i}", project="billing", provenance=confirmed,
        memory_payload={"lessons": [text]})))[0] for i in range(3)]
    ask = recall_payload("fb", "fb", include_unconfirmed=False, project="billing", query="billing deploy window")
    assert _ids(c.ok("POST", "/recall", ask)) == ids  # equal texts: ties break by id
    for _ in range(12):  # the last one is used again and again: far more than the cap needs
        rid = c.ok("POST", "/recall", ask)["request_id"]
        c.ok("POST", f"/recall/{rid}/usage", {"used_memory_ids": [ids[2]],
                                               "ignored": [{"memory_id": ids[0]}]})
    lifted = c.ok("POST", "/recall", ask)
    assert _ids(lifted) == [ids[2], ids[1], ids[0]]
    feedback = {i["memory_id"]: i["feedback"] for i in c.ok("GET", f"/recall-traces/{lifted['request_id']}")["items"]}
    assert 0.5 * FEEDBACK_CAP < feedback[ids[2]] < FEEDBACK_CAP and -FEEDBACK_CAP < feedback[ids[0]] < 0
    assert feedback[ids[1]] == 0
    if key_v1 is not None:
        assert [str(m) for m in _v1_recall_ids(key_v1, "fb", "billing", "billing deploy window")][:1] == [ids[2]]
    c.ok("PATCH", f"/memories/{ids[2]}/review", {"action": "reject"})
    assert ids[2] not in _ids(c.ok("POST", "/recall", ask))  # feedback never lifts an ineligible memory
    if key_v1 is not None:
        assert int(ids[2]) not in _v1_recall_ids(key_v1, "fb", "billing", "billing deploy window")


def _v1_recall_ids(key: str, ws: str, project: str, query: str) -> list[int]:
    body = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": ws, "project_id": project,
            "task_type": "general", "query": query, "entities": {},
            "scope": {"visibility": "project", "project_only": True, "include_unconfirmed": False,
                      "include_stale": False}, "limits": {"max_items": 5, "max_tokens": 2000},
            "sensitivity": {"contains_code": False, "contains_customer_data": False,
                            "contains_private_meeting_data": False}}
    response = invoke("recall", rest_event("POST", "/v1/recall", body, key=key))
    assert response["statusCode"] == 200, response["body"]
    return [item["memory_id"] for item in body_of(response)["direct_matches"]]


def flow_v1_surface(mint: Mint) -> list[str]:
    """The /v1 memory surface over OB1-written memories; returns their ids (the first one forgotten)."""
    key = mint(["v1"], RW, "v1-agent")
    c = Ob1Client(key)
    ids = _ids(c.ok("POST", "/writeback", writeback_payload("v1", "r5")))
    recall = c.ok("POST", "/recall", recall_payload("v1", "r5", include_unconfirmed=True))

    def call(method: str, path: str, query: dict[str, str]) -> tuple[int, Any]:
        response = invoke("ingest", rest_event(method, path, key=key, query=query))
        return response["statusCode"], body_of(response)

    status, page = call("GET", "/v1/memories", {"workspace_id": "v1", "limit": "2"})
    assert status == 200 and [m["memory_id"] for m in page["data"]] == [int(i) for i in ids[::-1][:2]]
    status, rest = call("GET", "/v1/memories", {"workspace_id": "v1", "cursor": page["nextCursor"]})
    assert [m["memory_id"] for m in rest["data"]] == [int(i) for i in ids[::-1][2:]] and rest["nextCursor"] is None
    status, lessons = call("GET", "/v1/memories", {"workspace_id": "v1", "type": "lesson", "status": "unconfirmed"})
    assert [m["type"] for m in lessons["data"]] == ["lesson"]
    assert call("GET", "/v1/memories", {"workspace_id": "v1", "cursor": "bogus"})[0] == 400
    status, one = call("GET", f"/v1/memories/{ids[0]}", {"workspace_id": "v1"})
    assert status == 200 and one["data"]["body"].startswith("Agent memory smoke r5")
    assert call("DELETE", f"/v1/memories/{ids[0]}", {"workspace_id": "v1"})[0] == 204
    assert call("GET", f"/v1/memories/{ids[0]}", {"workspace_id": "v1"})[0] == 404
    assert call("DELETE", f"/v1/memories/{ids[0]}", {"workspace_id": "v1"})[0] == 404
    assert ids[0] not in _ids(c.ok("POST", "/recall", recall_payload("v1", "r5", include_unconfirmed=True)))
    kept = {i["memory_id"]: i for i in c.ok("GET", f"/recall-traces/{recall['request_id']}")["items"]}
    assert kept[ids[0]]["memory"] is None and kept[ids[1]]["memory"]["id"] == ids[1]  # traces keep only the id
    other = mint(["elsewhere"], RW, "x")
    response = invoke("ingest", rest_event("GET", f"/v1/memories/{ids[1]}", key=other, query={"workspace_id": "v1"}))
    assert response["statusCode"] == 404
    return ids
