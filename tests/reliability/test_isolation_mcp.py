"""Isolation on the MCP surface: the route properties of test_isolation_routes.py, with the MCP tools as the caller.

Every tool is one route (tools.py), so each generated request is drawn from its route's own schema, aimed at a
target workspace, and sent as the tool's arguments through the official SDK's in-memory client (a server holding
the key, as `agentkb mcp` on stdio holds AGENTKB_KEY) and through `agentkb mcp --http`, one server shared by keys of
different workspaces and principals, each request bringing its own key. For any key and target:
- no tool result carries another workspace's data or another principal's personal memories;
- a tool aimed at an unreachable workspace answers exactly what it answers for missing ids (nothing read,
  listed or counted);
- a write tool aimed at an unreachable workspace changes nothing its owner sees;
- the workspace a tool fills in when the call names none (the key's only workspace, or the server's --workspace)
  never widens what the key reaches.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agentkb.mcp.backends import InProcessApi
from agentkb.mcp.cli import _workspaces_of
from agentkb.mcp.server import ToolRunner, build_server
from agentkb.mcp.tools import TOOLS, ToolSpec
from tests.e2e.mcp.support import agentkb_command, subprocess_env
from tests.reliability.test_isolation import PRINCIPALS, WORKSPACES, _key, token
from tests.reliability.test_isolation import world as world  # noqa: PLC0414  (the seeded fixture, shared)
from tests.reliability.test_isolation_routes import (
    SETTINGS,
    Caller,
    aimed,
    case_strategy,
    check_request,
    forbidden,
    http_caller,
)

BY_ROUTE = {(tool.route.method, tool.route.path): tool for tool in TOOLS}
STATUS = re.compile(r"^[A-Z_]+ \((\d{3})\)")


def tool_arguments(spec: ToolSpec, query: dict[str, str], body: Any) -> dict[str, Any]:
    """A route request as the tool's arguments: the body, or the query typed as the tool's schema declares it."""
    if spec.route.method != "GET":
        return body if isinstance(body, dict) else {}
    types = {name: prop.get("type") for name, prop in (spec.query_schema or {}).items()}
    return {k: int(v) if types.get(k) == "integer" and v.lstrip("-").isdigit() else v for k, v in query.items()}


def as_response(result: Any) -> tuple[int, str]:
    """(status, everything the agent sees): the API status of an error result (its text starts `CODE (status)`)."""
    shown = "\n".join(getattr(block, "text", "") for block in result.content)
    found = STATUS.match(shown) if result.is_error else None
    status = int(found.group(1)) if found else (200 if not result.is_error else 599)
    return status, json.dumps(result.structured_content, sort_keys=True) + "\n" + shown


def in_memory_caller(workspace: str | None = None) -> Caller:
    """The MCP tools through the SDK's in-memory client, a fresh server holding each call's key."""

    def call(key: str, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, str]:
        spec = next(s for (m, _), s in BY_ROUTE.items() if m == method and s.route.path == path)
        server = build_server(ToolRunner(InProcessApi(), workspace, _workspaces_of), key)

        async def main() -> Any:
            async with Client(server) as client:
                return await client.call_tool(spec.name, tool_arguments(spec, query, body))

        return as_response(anyio.run(main))

    return call


TOOL_ROUTES = sorted(BY_ROUTE)


def test_every_tool_is_a_route_under_the_property() -> None:
    # A new tool must map to a route of the table; then the properties below draw requests for it
    from agentkb.api.routes_table import ROUTES

    assert {(r.method, r.path) for r in ROUTES} >= set(TOOL_ROUTES) and len(TOOL_ROUTES) == len(TOOLS) >= 6


@SETTINGS
@given(data=st.data(), op=st.sampled_from(TOOL_ROUTES), target=st.sampled_from(WORKSPACES),
       workspaces=st.sets(st.sampled_from(WORKSPACES), min_size=1, max_size=2).map(lambda s: tuple(sorted(s))),
       scopes=st.sampled_from([("api:read",), ("api:read", "api:write"), ("api:write",)]),
       principal=st.sampled_from(PRINCIPALS))
def test_every_tool_keeps_to_the_keys_workspaces(world: dict[str, Any], data: st.DataObject, op: tuple[str, str],
                                                 target: str, workspaces: tuple[str, ...], scopes: tuple[str, ...],
                                                 principal: str) -> None:
    method, path = op
    case = data.draw(case_strategy(method, path), label="case")
    key = _key(world, workspaces, scopes, principal)
    check_request(in_memory_caller(), world, key, set(workspaces), scopes, principal, method, case, target,
                  view=http_caller)


@pytest.mark.parametrize("op", TOOL_ROUTES, ids=lambda op: BY_ROUTE[op].name)
def test_each_tool_aimed_at_a_foreign_workspace_is_absence(world: dict[str, Any], op: tuple[str, str]) -> None:
    method, path = op

    @settings(max_examples=3, deadline=None, database=None, suppress_health_check=list(SETTINGS.suppress_health_check))
    @given(case=case_strategy(method, path))
    def one(case: Any) -> None:
        key = _key(world, ("ws-a",), ("api:read", "api:write"), "alice")
        check_request(in_memory_caller(), world, key, {"ws-a"}, ("api:read", "api:write"), "alice", method, case,
                      "ws-b", view=http_caller)

    one()


def implied(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments without the workspace, so the tool fills one in."""
    out = json.loads(json.dumps(arguments))
    node = out
    for name in spec.workspace_path[:-1]:
        node = node.get(name) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(spec.workspace_path[-1], None)
    return out


@SETTINGS
@given(data=st.data(), op=st.sampled_from(TOOL_ROUTES), server_workspace=st.sampled_from([None, *WORKSPACES]),
       workspaces=st.sets(st.sampled_from(WORKSPACES[:2]), min_size=1, max_size=2).map(lambda s: tuple(sorted(s))),
       principal=st.sampled_from(PRINCIPALS))
def test_an_implied_workspace_never_widens_the_keys_reach(world: dict[str, Any], data: st.DataObject,
                                                          op: tuple[str, str], server_workspace: str | None,
                                                          workspaces: tuple[str, ...], principal: str) -> None:
    # Given a call that names no workspace, on a server with or without --workspace
    method, path = op
    case = data.draw(case_strategy(method, path), label="case")
    key = _key(world, workspaces, ("api:read", "api:write"), principal)
    spec = BY_ROUTE[op]
    own = workspaces[0]
    request_path, query, body = aimed(case, server_workspace or own, world, missing=False)
    arguments = implied(spec, tool_arguments(spec, query, body))
    if spec.route.method == "GET":
        query, body = {k: str(v) for k, v in arguments.items()}, None
    else:
        body = arguments
    status, text = in_memory_caller(server_workspace)(key, method, path, query, body)
    # Then it sees nothing beyond the key's reach, and a foreign --workspace is refused as absence
    assert status < 500, text
    for secret in forbidden(set(workspaces), principal):
        assert secret not in text, (spec.name, secret)
    if server_workspace is not None and server_workspace not in workspaces:
        assert status in (400, 404, 409, 422), (spec.name, status, text)


@pytest.fixture()
def mcp_http(world: dict[str, Any], data_dir: Any) -> Iterator[str]:
    """`agentkb mcp --http` on the world's data directory; AGENTKB_KEY (a ws-b key) must never stand in."""
    env = subprocess_env(data_dir, AGENTKB_KEY=_key(world, ("ws-b",), ("api:read", "api:write"), "bob"))
    proc = subprocess.Popen(agentkb_command("mcp", "--http", "--port", "0"), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        assert found, f"agentkb mcp --http did not start: {line!r}"
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def http_mcp_caller(url: str) -> Caller:
    """The MCP tools over streamable HTTP: one shared server, each request carrying its own key."""

    def call(key: str, method: str, path: str, query: dict[str, str], body: Any) -> tuple[int, str]:
        spec = next(s for (m, _), s in BY_ROUTE.items() if m == method and s.route.path == path)

        async def main() -> Any:
            async with (httpx2.AsyncClient(headers={"X-API-Key": key}, timeout=httpx2.Timeout(120)) as http,
                        Client(streamable_http_client(url, http_client=http)) as client):
                return await client.call_tool(spec.name, tool_arguments(spec, query, body))

        return as_response(anyio.run(main))

    return call


def interleaved(caller: Caller, world: dict[str, Any], method: str, path: str) -> None:
    """Generated requests of one tool, by a ws-a key and a ws-b key in turn, each at the other's and its own."""

    @settings(max_examples=2, deadline=None, database=None, suppress_health_check=list(SETTINGS.suppress_health_check))
    @given(case=case_strategy(method, path))
    def one(case: Any) -> None:
        for ws, other, principal in (("ws-a", "ws-b", "alice"), ("ws-b", "ws-a", "bob")):
            key = _key(world, (ws,), ("api:read", "api:write"), principal)
            for target in (other, ws):
                check_request(caller, world, key, {ws}, ("api:read", "api:write"), principal, method, case, target,
                              view=http_caller)

    one()


def test_one_http_server_keeps_each_requests_key_to_its_own_workspaces(world: dict[str, Any], mcp_http: str) -> None:
    # Given one `agentkb mcp --http` serving keys of both workspaces and both principals, calls interleaved
    caller = http_mcp_caller(mcp_http)
    for method, path in TOOL_ROUTES:
        interleaved(caller, world, method, path)
    # And a personal memory recalled over the shared server is its owner's only
    for principal in PRINCIPALS:
        key = _key(world, ("ws-a",), ("api:read",), principal)
        status, text = caller(key, "POST", "/v1/recall", {}, {
            "workspace_id": "ws-a", "query": "billing deploy private note", "project_id": "p1",
            "scope": {"visibility": "personal", "project_only": False, "include_unconfirmed": False,
                      "include_stale": False}, "limits": {"max_items": 50, "max_tokens": 8000}})
        assert status == 200, text
        assert token("ws-a", principal) in text
        assert all(token("ws-a", p) not in text for p in PRINCIPALS if p != principal)
