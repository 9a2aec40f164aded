"""Isolation on EVERY surface: the routes come from GET /openapi.json, so routes added later (/ob1/*, management
routes, memory list/get/delete) are covered the day they land, with requests generated from their own schemas.

For any key (workspaces, scopes, principal), any authenticated route and any target workspace:
- no response carries data of a workspace the key cannot reach, nor another principal's personal memories;
- a request aimed at an unreachable workspace answers exactly what the same request for missing ids answers
  (denial is absence: nothing is read, listed or counted);
- a write or delete aimed at an unreachable workspace changes nothing its owner can see.

`check_request` takes a caller, not an HTTP route: another surface (the MCP server's tools, the direct-invoke
shape) is held to the same properties by passing its own caller (`http_caller` here; the MCP tools in
test_isolation_mcp.py).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkb.api.routers import openapi_document
from agentkb.api.routes_table import ROUTES
from tests.helpers import rest_event
from tests.reliability.test_isolation import MISSING_UUID, PRINCIPALS, PROJECTS, WORKSPACES, _key, call, token
from tests.reliability.test_isolation import world as world  # noqa: PLC0414  (the seeded fixture, shared)

Caller = Callable[[str, str, str, dict[str, str], Any], tuple[int, str]]  # (key, method, path, query, body)
WORKSPACE_FIELDS = {"workspaceId", "workspace_id"}
MISSING_KB = "0f0f0f0f-0000-4000-8000-000000000000"
SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.filter_too_much, HealthCheck.data_too_large])


def authenticated_operations() -> list[tuple[str, str]]:
    public = {(r.method, r.path) for r in ROUTES if r.scope is None}
    return sorted((method.upper(), path) for path, item in openapi_document()["paths"].items() for method in item
                  if method in ("get", "post", "put", "patch", "delete") and (method.upper(), path) not in public)


@cache
def case_strategy(method: str, path: str) -> Any:
    import schemathesis

    return schemathesis.openapi.from_dict(openapi_document())[path][method].as_strategy()


def http_caller(key: str, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, str]:
    """The HTTP routes through the real handlers (REST v1 events), as the local gateway and API Gateway send."""
    template = next((r.path for r in ROUTES if r.method == method and r.pattern.match(path)), path)
    event = rest_event(method, path, body, query=query or None, resource=template)
    return call(event, key)


def aim(value: Any, target: str, kb: str) -> Any:
    """Every workspace field -> the target workspace, every knowledge-base id -> the target's KB."""
    if isinstance(value, list):
        return [aim(v, target, kb) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for field, item in value.items():
        if field in WORKSPACE_FIELDS:
            out[field] = target
        elif field == "knowledgeBaseIds" and isinstance(item, list):
            out[field] = [kb]
        elif field == "knowledgeBaseId":
            out[field] = kb
        else:
            out[field] = aim(item, target, kb)
    return out


def aimed(case: Any, target: str, world: dict[str, Any], missing: bool) -> tuple[str, dict[str, str], Any]:
    """(path, query, body) of a generated case, pointed at the target workspace's resources (or missing ones)."""
    kb = MISSING_KB if missing else world["kbs"].get(target, MISSING_KB)
    memories = world["memories"].get(target) or [("", "", MISSING_UUID)]
    ids = {"knowledgeBaseId": kb, "documentId": MISSING_UUID if missing else world["documents"].get(target, kb),
           "snapshotId": MISSING_UUID if missing else world["snapshots"].get(target, MISSING_UUID),
           "memoryId": MISSING_UUID if missing else memories[0][2]}
    path = case.path
    for name in case.path_parameters or {}:
        value = ids.get(name) or ids["memoryId" if "memor" in path else "knowledgeBaseId"]
        path = path.replace("{" + name + "}", str(value))  # memory ids are integers
    query = {k: (target if k in WORKSPACE_FIELDS else str(v)) for k, v in (case.query or {}).items()}
    for parameter in case.operation.definition.raw.get("parameters", []):
        if parameter.get("in") == "query" and parameter.get("name") in WORKSPACE_FIELDS:
            query[parameter["name"]] = target
    body = aim(case.body, target, kb) if isinstance(case.body, dict | list) else None
    return path, query, body


def forbidden(reachable: set[str], principal: str) -> list[str]:
    """What this key must never see: other workspaces' data and other principals' personal memories."""
    out = []
    for ws in WORKSPACES[:2]:
        if ws not in reachable:
            out += [token(ws), token(ws, "svc"), *(token(ws, p) for p in PROJECTS), *(token(ws, p) for p in PRINCIPALS)]
        else:
            out += [token(ws, p) for p in PRINCIPALS if p != principal]
    return out


def owner_view(caller: Caller, world: dict[str, Any], ws: str) -> tuple[Any, ...]:
    """What the workspace's owner sees of its seeded data: the document, the snapshot, the graph entity."""
    owner = _key(world, (ws,), ("api:read",), "owner")
    found = caller(owner, "POST", "/api/v2/knowledge/search", {}, {"workspaceId": ws, "knowledgeBaseIds":
                                                                   [world["kbs"][ws]], "query": "deploy runbook"})
    snapshot = caller(owner, "GET", f"/v1/snapshots/{world['snapshots'][ws]}", {}, None)
    graph = caller(owner, "POST", "/v1/graph/search", {}, {"workspaceId": ws, "query": token(ws, "svc")})
    return found[0], token(ws) in found[1], snapshot, graph[0], token(ws, "svc") in graph[1]


def check_request(caller: Caller, world: dict[str, Any], key: str, reachable: set[str], scopes: tuple[str, ...],
                  principal: str, method: str, case: Any, target: str, view: Caller | None = None) -> None:
    """The three isolation properties for one generated request on one surface (`view`: how the owner looks,
    by default through the same surface; a surface without every route, like the MCP tools, passes HTTP)."""
    required = next((r.scope for r in ROUTES if r.method == method and r.path == case.path), "api:write")
    writes, denied = method != "GET" and required == "api:write", target not in reachable
    view = view or caller
    before = owner_view(view, world, target) if writes and denied and target in world["kbs"] else None
    path, query, body = aimed(case, target, world, missing=False)
    status, text = caller(key, method, path, query, body)
    assert status < 500, (method, path, text)
    for secret in forbidden(reachable, principal):
        assert secret not in text, (method, path, secret)
    if denied and required in scopes:
        missing = caller(key, method, *aimed(case, target, world, missing=True))
        assert (status, text) == missing, (method, path)  # denial looks exactly like absence
        assert status in (400, 404, 409, 413, 415, 422), (method, path, status, text)
    if before is not None:
        assert owner_view(view, world, target) == before, (method, path)  # nothing changed for the owner


OPERATIONS = authenticated_operations()


# OB1's health route needs a key (as OB1's server does) but names no workspace and returns no data: nothing to aim.
WORKSPACELESS = {("GET", "/ob1/health")}
AIMABLE = [op for op in OPERATIONS if op not in WORKSPACELESS]


@SETTINGS
@given(data=st.data(), op=st.sampled_from(AIMABLE), target=st.sampled_from(WORKSPACES),
       workspaces=st.sets(st.sampled_from(WORKSPACES), min_size=1, max_size=2).map(lambda s: tuple(sorted(s))),
       scopes=st.sampled_from([("api:read",), ("api:read", "api:write"), ("api:write",)]),
       principal=st.sampled_from(PRINCIPALS))
def test_every_route_keeps_to_the_keys_workspaces(world: dict[str, Any], data: st.DataObject, op: tuple[str, str],
                                                  target: str, workspaces: tuple[str, ...],
                                                  scopes: tuple[str, ...], principal: str) -> None:
    method, path = op
    case = data.draw(case_strategy(method, path), label="case")
    key = _key(world, workspaces, scopes, principal)
    check_request(http_caller, world, key, set(workspaces), scopes, principal, method, case, target)


def test_every_authenticated_route_is_under_test() -> None:
    # The generator draws from /openapi.json itself; this pins that the document and the route table agree.
    table = {(r.method, r.path) for r in ROUTES if r.scope is not None}
    assert set(OPERATIONS) == table and len(OPERATIONS) >= 11


@pytest.mark.parametrize("op", AIMABLE, ids=lambda op: f"{op[0]} {op[1]}")
def test_each_route_aimed_at_a_foreign_workspace_is_absence(world: dict[str, Any], op: tuple[str, str]) -> None:
    # Every route at least once, deterministically: a full-scope key of ws-a aimed at ws-b's resources
    method, path = op

    @settings(max_examples=3, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=case_strategy(method, path))
    def one(case: Any) -> None:
        key = _key(world, ("ws-a",), ("api:read", "api:write"), "alice")
        check_request(http_caller, world, key, {"ws-a"}, ("api:read", "api:write"), "alice", method, case, "ws-b")

    one()
