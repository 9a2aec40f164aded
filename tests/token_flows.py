"""Flows of a client that holds only an OAuth access token (from the dev issuer the test starts on loopback),
through the real handlers. The embedded (tests/handlers) and AWS (tests/handlers/aws) suites run the same ones."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from agentkb.services.identity.dev_issuer import DevIssuer
from testkit.corpus import EVENTS, SNAPSHOT_BODY
from tests.helpers import body_of, http_event, invoke, response_headers, rest_event
from tests.ob1_client import Ob1Client, recall_payload, writeback_payload

RW = ["api:read", "api:write"]
Call = Callable[..., tuple[int, Any, dict[str, str]]]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def caller(token: str) -> Call:
    """call(function, method, path, body=None, query=None, resource=None) -> (status, body, headers)."""

    def call(function: str, method: str, path: str, body: Any = None, query: dict[str, str] | None = None,
             resource: str | None = None) -> tuple[int, Any, dict[str, str]]:
        event = rest_event(method, path, body, headers=bearer(token), query=query, resource=resource or path)
        response = invoke(function, event)
        return response["statusCode"], body_of(response), response_headers(response)

    return call


def _recorded_body(name: str, workspace: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(json.loads((EVENTS / name).read_text())["body"])
    body["workspace_id" if "workspace_id" in body else "workspaceId"] = workspace
    return body


def flow_every_route_family(issuer: DevIssuer, ws: str = "tok") -> None:
    """/api/v2 (knowledge), /v1 (memories, graph, recall, snapshots) and /ob1, with a token only."""
    call = caller(issuer.mint("alice", RW, [ws]))
    status, created, headers = call("ingest", "POST", "/api/v2/knowledge/bases", {"workspaceId": ws, "name": "kb"})
    assert status == 201, created
    assert headers["x-ratelimit-limit"]  # an authenticated answer
    kb = created["data"]["id"]
    doc = {"workspaceId": ws, "name": "refunds.md", "content": "Refunds go back to the original payment method."}
    status, added, _ = call("ingest", "POST", f"/api/v2/knowledge/bases/{kb}/documents", doc,
                            resource="/api/v2/knowledge/bases/{knowledgeBaseId}/documents")
    assert status == 201, added
    search = {"workspaceId": ws, "knowledgeBaseIds": [kb], "query": "refund payment method", "topK": 3}
    status, found, _ = call("search", "POST", "/api/v2/knowledge/search", search)
    assert status == 200 and found["data"]["results"][0]["documentName"] == "refunds.md", found
    status, listed, _ = call("ingest", "GET", "/api/v2/knowledge/bases", query={"workspaceId": ws})
    assert status == 200 and [k["id"] for k in listed["data"]] == [kb]
    memory = {"workspace_id": ws, "visibility": "workspace", "type": "decision", "name": "refunds",
              "body": "Refunds are processed within five business days."}
    status, written, _ = call("ingest", "POST", "/v1/memories", memory)
    assert status == 201, written
    status, recalled, _ = call("recall", "POST", "/v1/recall", _recorded_body("recall/recall_ok.json", ws))
    assert status == 200, recalled
    status, graph, _ = call("ingest", "POST", "/v1/graph", _recorded_body("graph/write_ok.json", ws))
    assert status in (200, 201), graph
    status, graphed, _ = call("search", "POST", "/v1/graph/search", _recorded_body("graph/search_agent.json", ws))
    assert status == 200, graphed
    snapshot = copy.deepcopy(SNAPSHOT_BODY)
    snapshot["scope"]["workspaceId"], snapshot["sources"]["knowledge"]["knowledgeBaseIds"] = ws, [kb]
    status, made, _ = call("snapshot", "POST", "/v1/snapshots", snapshot)
    assert status == 201, made
    status, got, _ = call("snapshot", "GET", f"/v1/snapshots/{made['snapshotId']}",
                          resource="/v1/snapshots/{snapshotId}")
    assert status == 200 and got["snapshotId"] == made["snapshotId"]
    ob1 = Ob1Client(f"Bearer {issuer.mint('alice', RW, [ws])}", carrier="Authorization")
    assert ob1.ok("GET", "/health")["ok"] is True
    assert len(ob1.ok("POST", "/writeback", writeback_payload(ws, "t1"))["memories"]) == 5
    assert ob1.ok("POST", "/recall", recall_payload(ws, "t1", include_unconfirmed=True))["request_id"]


def flow_http_api_v2_event(issuer: DevIssuer, ws: str = "tok") -> None:
    event = http_event("GET", "/api/v2/knowledge/bases", headers=bearer(issuer.mint("alice", ["api:read"], [ws])),
                       query={"workspaceId": ws})
    response = invoke("ingest", event)
    assert response["statusCode"] == 200, response["body"]


def flow_scopes_and_reach(issuer: DevIssuer, ws: str = "tok") -> None:
    """A read-only token cannot write (403 INSUFFICIENT_SCOPE + the RFC 6750 challenge); a workspace outside the
    claim is not found (as for a key: its existence is not told); a token with no workspaces reaches none."""
    reader = caller(issuer.mint("reader", ["api:read"], [ws]))
    status, refused, headers = reader("ingest", "POST", "/api/v2/knowledge/bases", {"workspaceId": ws, "name": "x"})
    assert status == 403 and refused["error"]["details"]["code"] == "INSUFFICIENT_SCOPE"
    assert headers["www-authenticate"] == 'Bearer realm="agentkb", error="insufficient_scope", scope="api:write"'
    owner = caller(issuer.mint("bob", RW, ["elsewhere"]))
    status, theirs, _ = owner("ingest", "POST", "/api/v2/knowledge/bases", {"workspaceId": "elsewhere", "name": "b"})
    assert status == 201, theirs
    kb = theirs["data"]["id"]
    for call in (caller(issuer.mint("alice", RW, [ws])), caller(issuer.mint("nobody", RW, []))):
        status, body, _ = call("ingest", "POST", "/api/v2/knowledge/bases", {"workspaceId": "elsewhere", "name": "x"})
        assert status == 404 and body["error"]["message"] == "Workspace not found", body
        status, body, _ = call("ingest", "GET", "/api/v2/knowledge/bases", query={"workspaceId": "elsewhere"})
        assert status == 404, body
        status, body, _ = call("ingest", "GET", f"/api/v2/knowledge/bases/{kb}", query={"workspaceId": "elsewhere"},
                               resource="/api/v2/knowledge/bases/{knowledgeBaseId}")
        assert status == 404, body
    assert owner("ingest", "GET", "/api/v2/knowledge/bases", query={"workspaceId": "elsewhere"})[0] == 200


def flow_refused_tokens(issuer: DevIssuer, ws: str = "tok") -> None:
    """Expired, another audience, garbage, no credential: 401 with the Bearer challenge; nothing is written."""
    for token in (issuer.mint("alice", RW, [ws], exp=1), issuer.mint("alice", RW, [ws], aud="other"), "not.a.jwt"):
        status, body, headers = caller(token)("ingest", "POST", "/v1/memories", {"workspace_id": ws})
        assert status == 401 and body["error"]["details"]["code"] == "INVALID_TOKEN", body
        assert headers["www-authenticate"].startswith('Bearer realm="agentkb", error="invalid_token"')
        assert "x-ratelimit-limit" not in headers
    missing = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": ws}))
    assert missing["statusCode"] == 401
    assert response_headers(missing)["www-authenticate"] == 'Bearer realm="agentkb"'


def flow_personal_memories_follow_sub(issuer: DevIssuer, ws: str = "tok") -> None:
    """Two people of one workspace: a personal memory is its sub's, across that sub's tokens, and no one else's."""
    personal = {"workspace_id": ws, "visibility": "personal", "type": "note", "name": "mine", "body": "alice's own"}
    status, written, _ = caller(issuer.mint("alice", RW, [ws]))("ingest", "POST", "/v1/memories", personal)
    assert status == 201, written

    def listed(sub: str) -> list[str]:
        status, body, _ = caller(issuer.mint(sub, RW, [ws]))("ingest", "GET", "/v1/memories",
                                                              query={"workspace_id": ws})
        assert status == 200, body
        return [m["body"] for m in body["data"] if m["visibility"] == "personal"]

    assert listed("alice") == ["alice's own"]  # a fresh token of the same sub
    assert listed("bob") == []


def flow_rate_limit_per_sub(issuer: DevIssuer, ws: str = "tok") -> None:
    """One budget per person across their tokens; another sub has its own."""

    def remaining(sub: str) -> int:
        _, _, headers = caller(issuer.mint(sub, ["api:read"], [ws]))("ingest", "GET", "/v1/memories",
                                                                     query={"workspace_id": ws})
        return int(headers["x-ratelimit-remaining"])

    first = remaining("carol")
    assert remaining("carol") == first - 1
    assert remaining("dave") == first
