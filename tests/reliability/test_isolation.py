"""Isolation properties (hypothesis) over random keys, workspaces, scopes, projects and visibilities: no route
returns data across a workspace, visibility or project boundary, and denial looks exactly like absence."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkb.composition import Ports
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.services.ingest import service as ingest
from tests.helpers import body_of, mint, rest_event
from tests.reliability.corpus import replay
from tests.reliability.make_events import RECALL, SNAPSHOT_BODY

WORKSPACES = ("ws-a", "ws-b", "ws-c")  # ws-c exists for no one: absence
PROJECTS = ("p1", "p2")
PRINCIPALS = ("alice", "bob")
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MISSING_UUID = "9b2e7c1a-0000-4000-8000-000000000000"


def token(*parts: str) -> str:
    return "tok" + "".join(p.replace("-", "") for p in parts)  # one word the lexical index keeps whole


@pytest.fixture()
def world(bundle: Ports) -> dict[str, Any]:
    """Two workspaces, each with a KB + document, project and personal memories, a graph and a snapshot."""
    kbs, snapshots, documents, memories = {}, {}, {}, {}
    for ws in WORKSPACES[:2]:
        kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId=ws, name="kb"), OPERATOR,
                                          deps(bundle))
        doc = ingest.add_document(kb.id, AddDocumentRequest(workspaceId=ws, name=f"{ws}.md", content=(
            f"The deploy runbook of {ws} says {token(ws)} before every billing deploy.")), OPERATOR, deps(bundle))
        kbs[ws], documents[ws] = kb.id, doc.id
        for principal in PRINCIPALS:
            key = mint(bundle, [ws], ["api:read", "api:write"], principal)
            for project in PROJECTS:
                memory = {"workspace_id": ws, "project_id": project, "visibility": "project", "type": "decision",
                          "name": f"deploy-{project}-{principal}",
                          "body": f"Billing deploy note {token(ws, project)} for {project}."}
                written = replay(rest_event("POST", "/v1/memories", memory, key=key))
                assert written["statusCode"] == 201
                memories.setdefault(ws, []).append(("project", principal, body_of(written)["memory_id"]))
            personal = {"workspace_id": ws, "visibility": "personal", "type": "note", "name": f"mine-{principal}",
                        "body": f"Billing deploy private note {token(ws, principal)}."}
            written = replay(rest_event("POST", "/v1/memories", personal, key=key))
            assert written["statusCode"] == 201
            memories[ws].append(("personal", principal, body_of(written)["memory_id"]))
        graph = {"workspaceId": ws, "entities": [{"id": f"svc:{ws}", "kind": "service", "label": token(ws, "svc"),
                                                  "identity": {"key": ws, "scope": "workspace", "aliases": [],
                                                               "fingerprint": "0" * 64},
                                                  "attributes": {}, "proofIds": []}], "relations": [], "proofs": []}
        assert replay(rest_event("POST", "/v1/graph", graph, key=key))["statusCode"] == 200
        body = {**SNAPSHOT_BODY, "scope": {**SNAPSHOT_BODY["scope"], "workspaceId": ws},
                "sources": {"knowledge": {"knowledgeBaseIds": [kb.id], "query": "billing deploy runbook"}}}
        made = replay(rest_event("POST", "/v1/snapshots", body, key=key))
        assert made["statusCode"] == 201, body_of(made)
        snapshots[ws] = body_of(made)["snapshotId"]
    return {"kbs": kbs, "snapshots": snapshots, "documents": documents, "memories": memories,
            "bundle": bundle, "keys": {}}


def request_for(op: str, ws: str, world: dict[str, Any], project: str, missing: bool) -> dict[str, Any]:
    kb = "0f0f0f0f-0000-4000-8000-000000000000" if missing else world["kbs"].get(ws, "nope")
    snap = MISSING_UUID if missing else world["snapshots"].get(ws, MISSING_UUID)
    if op == "search":
        return rest_event("POST", "/api/v2/knowledge/search", {"workspaceId": ws, "knowledgeBaseIds": [kb],
                                                               "query": "billing deploy runbook"})
    if op == "tags":
        return rest_event("GET", f"/api/v2/knowledge/bases/{kb}/tags", query={"workspaceId": ws},
                          resource="/api/v2/knowledge/bases/{knowledgeBaseId}/tags")
    if op == "snapshot":
        return rest_event("GET", f"/v1/snapshots/{snap}", resource="/v1/snapshots/{snapshotId}")
    if op == "graph":
        return rest_event("POST", "/v1/graph/search", {"workspaceId": ws, "query": token(ws, "svc")})
    scope = {**RECALL["scope"], "visibility": "personal", "project_only": False}
    return rest_event("POST", "/v1/recall", {**RECALL, "workspace_id": ws, "project_id": project,
                                             "query": "billing deploy note", "entities": {}, "scope": scope,
                                             "limits": {"max_items": 50, "max_tokens": 8000}})


def call(event: dict[str, Any], key: str) -> tuple[int, str]:
    event["headers"]["X-API-Key"] = key
    event["multiValueHeaders"]["X-API-Key"] = [key]
    response = replay(event)
    return response["statusCode"], json.dumps(body_of(response), sort_keys=True)


def _key(world: dict[str, Any], workspaces: tuple[str, ...], scopes: tuple[str, ...], principal: str) -> str:
    cache_key = (workspaces, scopes, principal)
    if cache_key not in world["keys"]:
        world["keys"][cache_key] = mint(world["bundle"], list(workspaces), list(scopes), principal)
    return str(world["keys"][cache_key])


def foreign_tokens(reachable: set[str], principal: str, project: str) -> list[str]:
    """Tokens this caller must never see: other workspaces, other projects' and other owners' memories."""
    out = []
    for ws in WORKSPACES[:2]:
        if ws not in reachable:
            out += [token(ws), token(ws, "svc")] + [token(ws, p) for p in PROJECTS]
            out += [token(ws, p) for p in PRINCIPALS]
        else:
            out += [token(ws, p) for p in PROJECTS if p != project]
            out += [token(ws, p) for p in PRINCIPALS if p != principal]
    return out


@SETTINGS
@given(workspaces=st.sets(st.sampled_from(WORKSPACES), min_size=1, max_size=2).map(lambda s: tuple(sorted(s))),
       scopes=st.sampled_from([("api:read",), ("api:read", "api:write"), ("api:write",)]),
       principal=st.sampled_from(PRINCIPALS), project=st.sampled_from(PROJECTS),
       op=st.sampled_from(["search", "tags", "snapshot", "graph", "recall"]), target=st.sampled_from(WORKSPACES))
def test_no_route_crosses_a_boundary_and_denial_equals_absence(world: dict[str, Any], workspaces: tuple[str, ...],
                                                                scopes: tuple[str, ...], principal: str, project: str,
                                                                op: str, target: str) -> None:
    key = _key(world, workspaces, scopes, principal)
    status, body = call(request_for(op, target, world, project, missing=False), key)
    if "api:read" not in scopes:  # decided before any lookup: says nothing about the workspace
        assert status == 403 and "INSUFFICIENT_SCOPE" in body
        return
    for secret in foreign_tokens(set(workspaces), principal, project):
        assert secret not in body, (op, target, secret)
    if target not in workspaces:
        assert status == 404, body
        missing_status, missing_body = call(request_for(op, target, world, project, missing=True), key)
        assert (status, body) == (missing_status, missing_body)  # denial is indistinguishable from absence
    elif target != "ws-c" and op in ("search", "tags", "snapshot"):
        assert status == 200, body


@SETTINGS
@given(principal=st.sampled_from(PRINCIPALS), project=st.sampled_from(PROJECTS), ws=st.sampled_from(WORKSPACES[:2]))
def test_recall_sees_own_workspace_project_and_personal_memories_only(world: dict[str, Any], principal: str,
                                                                       project: str, ws: str) -> None:
    key = _key(world, (ws,), ("api:read",), principal)
    status, body = call(request_for("recall", ws, world, project, missing=False), key)
    assert status == 200, body
    assert token(ws, project) in body and token(ws, principal) in body  # what it may see, it sees
    for secret in foreign_tokens({ws}, principal, project):
        assert secret not in body, secret


def test_snapshot_of_another_workspace_is_the_same_404_as_a_missing_one(world: dict[str, Any]) -> None:
    key = _key(world, ("ws-a",), ("api:read",), "alice")
    foreign = call(rest_event("GET", f"/v1/snapshots/{world['snapshots']['ws-b']}",
                              resource="/v1/snapshots/{snapshotId}"), key)
    missing = call(rest_event("GET", f"/v1/snapshots/{MISSING_UUID}", resource="/v1/snapshots/{snapshotId}"), key)
    assert foreign == missing and foreign[0] == 404
