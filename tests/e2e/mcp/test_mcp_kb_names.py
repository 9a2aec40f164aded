"""Knowledge bases by name or id: `search_knowledge` and `create_snapshot` take "handbook" as well as its id, on
both backends of the MCP server (the embedded engine in process, and `--url`'s HTTP calls to a running API); an
unknown name is NOT_FOUND and a name two knowledge bases have is BAD_REQUEST, as tool errors with the envelope."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mcp import Client

from agentkb.mcp.backends import Api, HttpApi, InProcessApi
from agentkb.mcp.calls import ApiRequest, ApiResponse
from agentkb.mcp.cli import _workspaces_of
from agentkb.mcp.kb_names import with_kb_ids
from agentkb.mcp.server import ToolRunner, build_server
from agentkb.mcp.tools import BY_NAME
from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import structured, text
from tests.helpers import ERROR_RESPONSE

SEARCH, SNAPSHOT = BY_NAME["search_knowledge"], BY_NAME["create_snapshot"]


@dataclass
class Counting:
    """An Api that counts the calls it passes on (each one spends the key's rate-limit budget)."""

    api: Api
    calls: list[ApiRequest] = field(default_factory=list)

    def call(self, request: ApiRequest, key: str | None) -> ApiResponse:
        self.calls.append(request)
        return self.api.call(request, key)


def tool_calls(api: Api, key: str, calls: list[tuple[str, dict[str, Any]]], workspace: str | None = None) -> list[Any]:
    server = build_server(ToolRunner(api, workspace, _workspaces_of), key)

    async def main() -> list[Any]:
        async with Client(server) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(main)


def snapshot_arguments(kb: str) -> dict[str, Any]:
    return {"scope": {"maxClassification": "internal", "knowledgeBaseIds": [kb]}, "budget": {"maxTokens": 1500},
            "task": "Answer how to reset a password.",
            "sources": {"knowledge": {"knowledgeBaseIds": [kb], "query": "reset password", "topK": 3}}}


def check_names(results: list[Any], kb: str) -> None:
    by_name, mixed, unknown, snapshot, foreign = results
    hits = structured(by_name)["data"]["results"]
    assert hits and {hit["knowledgeBaseId"] for hit in hits} == {kb}, text(by_name)
    assert hits[0]["documentName"] == "password-reset.md"
    assert structured(mixed)["data"]["results"] == hits  # a name and the same KB's id: one knowledge base
    assert unknown.is_error and structured(unknown)["error"]["code"] == "NOT_FOUND"
    ERROR_RESPONSE.validate(structured(unknown))
    assert structured(unknown)["error"]["details"] == {"knowledgeBaseId": "handbok"}
    assert text(unknown).startswith("NOT_FOUND (404): No knowledge base is named 'handbok' in workspace 'demo'")
    body = structured(snapshot)
    assert not snapshot.is_error and body["scope"]["knowledgeBaseIds"] == [kb], text(snapshot)
    assert any(item["class"] == "documents" for item in body["items"]), text(snapshot)
    assert foreign.is_error and structured(foreign)["error"]["code"] == "NOT_FOUND"  # reach: as for an id


NAME_CALLS = [("search_knowledge", {"knowledgeBaseIds": "handbook", "query": "How do I reset my password?",
                                    "topK": 3}),
              ("search_knowledge", {"knowledgeBaseIds": ["handbook", "KB"], "query": "How do I reset my password?",
                                    "topK": 3}),
              ("search_knowledge", {"knowledgeBaseIds": ["handbok"], "query": "password"}),
              ("create_snapshot", snapshot_arguments("handbook")),
              ("search_knowledge", {"workspaceId": "elsewhere", "knowledgeBaseIds": "handbook", "query": "x"})]


def with_kb(calls: list[tuple[str, dict[str, Any]]], kb: str) -> list[tuple[str, dict[str, Any]]]:
    return [(name, {k: [kb if ref == "KB" else ref for ref in v] if isinstance(v, list) else v
                    for k, v in arguments.items()}) for name, arguments in calls]


def test_names_on_the_embedded_engine_in_process(seeded: Seeded) -> None:
    check_names(tool_calls(InProcessApi(), seeded.key, with_kb(NAME_CALLS, seeded.kb)), seeded.kb)


@pytest.mark.e2e
def test_names_against_a_running_api(seeded: Seeded, api_base: str) -> None:
    """`agentkb mcp --url`'s backend: the listing and the call are HTTP requests to `agentkb serve`."""
    check_names(tool_calls(HttpApi(api_base), seeded.key, with_kb(NAME_CALLS, seeded.kb), workspace="demo"),
                seeded.kb)


def test_ids_stay_one_api_call_and_a_name_costs_one_listing(seeded: Seeded) -> None:
    api = Counting(InProcessApi())
    by_id, by_name = tool_calls(api, seeded.key, [
        ("search_knowledge", {"knowledgeBaseIds": [seeded.kb], "query": "password"}),
        ("search_knowledge", {"knowledgeBaseIds": ["handbook"], "query": "password"})])
    assert not by_id.is_error and not by_name.is_error
    assert [(call.method, call.path) for call in api.calls] == [
        ("POST", SEARCH.route.path), ("GET", "/api/v2/knowledge/bases"), ("POST", SEARCH.route.path)]


def listing(*pages: list[tuple[str, str]]) -> Callable[[ApiRequest, str | None], ApiResponse]:
    """A list route serving `pages` of (id, name), cursors "1", "2", ..."""

    def call(request: ApiRequest, key: str | None) -> ApiResponse:
        page = int((request.query or {}).get("cursor", "0"))
        more = str(page + 1) if page + 1 < len(pages) else None
        data = [{"id": kb_id, "name": name} for kb_id, name in pages[page]]
        return ApiResponse(200, {}, {"data": data, "nextCursor": more})

    return call


@dataclass
class Fake:
    answer: Callable[[ApiRequest, str | None], ApiResponse]

    def call(self, request: ApiRequest, key: str | None) -> ApiResponse:
        return self.answer(request, key)


def test_names_resolve_across_pages_and_a_shared_name_is_ambiguous() -> None:
    api = Fake(listing([("kb-1", "alpha"), ("kb-2", "twin")], [("kb-3", "twin"), ("kb-4", "omega")]))
    request = SNAPSHOT.request({"scope": {"knowledgeBaseIds": ["omega", "kb-1"]},
                                "sources": {"knowledge": {"knowledgeBaseIds": ["alpha"]}}}, "ws")
    resolved = with_kb_ids(api, SNAPSHOT, request, "k")
    assert isinstance(resolved, ApiRequest) and resolved.body is not None
    assert resolved.body["scope"]["knowledgeBaseIds"] == ["kb-4", "kb-1"]
    assert resolved.body["sources"]["knowledge"]["knowledgeBaseIds"] == ["kb-1"]
    assert request.body is not None and request.body["scope"]["knowledgeBaseIds"] == ["omega", "kb-1"]  # a copy
    twin = with_kb_ids(api, SEARCH, SEARCH.request({"knowledgeBaseIds": "twin"}, "ws"), "k")
    assert isinstance(twin, ApiResponse) and twin.status == 400
    assert twin.body["error"]["code"] == "BAD_REQUEST" and twin.body["error"]["details"] == {
        "knowledgeBaseId": "twin", "candidates": ["kb-2", "kb-3"]}
    assert "2 knowledge bases are named 'twin' in workspace 'ws': pass an id" in twin.body["error"]["message"]


def test_a_refused_listing_is_the_tools_answer_and_uuids_are_never_looked_up() -> None:
    refused = ApiResponse(403, {}, {"error": {"code": "FORBIDDEN", "message": "Missing scope"}})
    api = Fake(lambda request, key: refused)
    assert with_kb_ids(api, SEARCH, SEARCH.request({"knowledgeBaseIds": "handbook"}, "ws"), "k") is refused
    uuid = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
    by_id = SEARCH.request({"knowledgeBaseIds": [uuid]}, "ws")
    assert with_kb_ids(api, SEARCH, by_id, "k") is by_id
    no_workspace = SEARCH.request({"knowledgeBaseIds": "handbook"}, None)
    assert with_kb_ids(api, SEARCH, no_workspace, "k") is no_workspace  # the API answers the missing workspace
