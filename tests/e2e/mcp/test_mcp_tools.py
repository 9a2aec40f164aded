"""Every tool on seeded data through the official SDK's in-memory client, on the embedded engine in-process:
results, schemas, annotations, and errors as tool errors carrying the envelope (the session keeps serving)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client, MCPError

from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.mcp.backends import InProcessApi
from agentkb.mcp.cli import _workspaces_of
from agentkb.mcp.server import ToolRunner, build_server
from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import structured, text
from tests.helpers import ERROR_RESPONSE, SEARCH_RESPONSE, mint
from tests.reliability.corpus import schema_validator as validator

READ_TOOLS = {"search_knowledge", "search_graph", "recall", "list_knowledge_bases"}
WRITE_TOOLS = {"create_snapshot", "write_memory"}


def session(key: str | None, body: Callable[[Client], Awaitable[Any]], mode: str = "auto",
            workspace: str | None = None) -> Any:
    """Run `body` against a fresh in-process server holding `key` (the stdio server's AGENTKB_KEY)."""
    server = build_server(ToolRunner(InProcessApi(), workspace, _workspaces_of), key)

    async def main() -> Any:
        async with Client(server, mode=mode) as client:
            return await body(client)

    return anyio.run(main)


def call(key: str | None, tool: str, arguments: dict[str, Any], mode: str = "auto") -> Any:
    return session(key, lambda client: client.call_tool(tool, arguments), mode)


def envelope(result: Any, code: str) -> dict[str, Any]:
    assert result.is_error, text(result)
    body = structured(result)
    ERROR_RESPONSE.validate(body)
    assert body["error"]["code"] == code, body
    assert text(result).startswith(code)
    return body["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_are_listed_with_annotations_and_schemas_from_the_models(seeded: Seeded, mode: str) -> None:
    listed = session(seeded.key, lambda client: client.list_tools(), mode)
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == READ_TOOLS | WRITE_TOOLS
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints.read_only_hint is (name in READ_TOOLS) and hints.idempotent_hint is (name in READ_TOOLS)
        schema = tool.input_schema
        Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and "$ref" not in str(schema) and "'ge'" not in str(schema)
        assert all(prop.get("description") for prop in schema["properties"].values()), name
    search = tools["search_knowledge"].input_schema
    assert search["properties"]["topK"]["maximum"] == 100 and search["properties"]["topK"]["minimum"] == 1
    assert search["required"] == ["knowledgeBaseIds"]  # the workspace is implied, never required
    recall = tools["recall"].input_schema
    assert recall["required"] == ["query"]
    assert recall["properties"]["limits"]["properties"]["max_items"]["maximum"] == 50
    snapshot = tools["create_snapshot"].input_schema
    assert "runId" not in snapshot["required"] and "workspaceId" not in snapshot["properties"]["scope"]["required"]
    assert tools["write_memory"].input_schema["properties"]["type"]["enum"][0] == "user"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_search_knowledge_numbered_hits_and_the_contract_body(seeded: Seeded, mode: str) -> None:
    result = call(seeded.key, "search_knowledge", {"knowledgeBaseIds": [seeded.kb], "query": "How do I reset my "
                                                   "password?", "topK": 3}, mode)
    assert not result.is_error
    body = structured(result)
    SEARCH_RESPONSE.validate(body)
    assert body["data"]["results"][0]["documentName"] == "password-reset.md"
    lines = text(result).splitlines()
    assert lines[0].startswith("3 of 3 results for 'How do I reset my password?'")
    assert lines[1].startswith("1. password-reset.md (chunk 0) - source: kb ") and " - score 0.0" in lines[1]


def test_search_graph_recall_and_list_knowledge_bases(seeded: Seeded) -> None:
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool("search_graph", {"query": "billing-api", "limit": 3}),
                await client.call_tool("recall", {"query": "how does billing-api deploy?"}),
                await client.call_tool("list_knowledge_bases", {})]

    graph, recall, kbs = session(seeded.key, body)
    validator("workspace-knowledge-search.v1.schema.json").validate(structured(graph))
    assert "1. billing-api [" in text(graph) and "--exposes--> Billing API v1" in text(graph)
    validator("recall-response.schema.json").validate(structured(recall))
    assert structured(recall)["direct_matches"][0]["name"] == "billing-deploy-policy"
    assert "1. billing-deploy-policy [decision] score " in text(recall)
    assert [kb["id"] for kb in structured(kbs)["data"]] == [seeded.kb] and structured(kbs)["nextCursor"] is None
    assert text(kbs).startswith("1 knowledge bases\n1. handbook - id " + seeded.kb)


def test_create_snapshot_lists_items_with_their_classes_and_replays(seeded: Seeded) -> None:
    arguments = {"runId": "3f2b8c1e-0d4a-4e6b-9a7c-5d1e2f3a4b5c", "attemptId": "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",
                 "scope": {"maxClassification": "internal", "knowledgeBaseIds": [seeded.kb]},
                 "budget": {"maxTokens": 1500}, "task": "Answer how to reset a password.",
                 "sources": {"knowledge": {"knowledgeBaseIds": [seeded.kb], "query": "reset password", "topK": 3}}}
    first = call(seeded.key, "create_snapshot", arguments)
    again = call(seeded.key, "create_snapshot", arguments)
    body = structured(first)
    validator("context-snapshot.schema.json").validate(body)
    assert body["scope"]["workspaceId"] == "demo" and structured(again) == body
    assert "\n1. [task] attempt:" in text(first) and "[documents]" in text(first)
    generated = structured(call(seeded.key, "create_snapshot", {k: v for k, v in arguments.items()
                                                               if k not in ("runId", "attemptId")}))
    assert generated["runId"] != arguments["runId"] and generated["snapshotId"] != body["snapshotId"]


def test_write_memory_then_recall_finds_it(seeded: Seeded) -> None:
    async def body(client: Client) -> tuple[Any, Any]:
        written = await client.call_tool("write_memory", {
            "type": "decision", "name": "mcp-door", "body": "Agents reach agentkb through the MCP door on stdio.",
            "entities": {"topics": ["mcp"]}})
        return written, await client.call_tool("recall", {"query": "how do agents reach agentkb over MCP?"})

    written, recalled = session(seeded.key, body)
    assert structured(written)["visibility"] == "workspace" and structured(written)["workspace_id"] == "demo"
    assert text(written).startswith(f"Stored memory {structured(written)['memory_id']} 'mcp-door' revision ")
    assert "mcp-door" in [m["name"] for m in structured(recalled)["results"]]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_validation_errors_are_tool_errors_and_the_session_keeps_serving(seeded: Seeded, mode: str) -> None:
    async def body(client: Client) -> list[Any]:
        return [await client.call_tool("search_knowledge", {"knowledgeBaseIds": seeded.kb, "query": "x", "topK": 101}),
                await client.call_tool("search_graph", {"query": "billing-api", "bogus": 1}),
                await client.call_tool("recall", {"query": "deploy", "limits": {"max_tokens": 5}}),
                await client.call_tool("search_knowledge", {"knowledgeBaseIds": seeded.kb, "query": "password"})]

    too_many, unknown_field, budget, fine = session(seeded.key, body, mode)
    assert envelope(too_many, "BAD_REQUEST")["details"] == [{"path": "topK",
                                                             "message": "Input should be less than or equal to 100"}]
    assert "\n- topK: Input should be less than or equal to 100" in text(too_many)
    assert envelope(unknown_field, "BAD_REQUEST")["details"][0]["path"] == "bogus"
    assert envelope(budget, "BAD_REQUEST")["details"][0]["path"] == "limits.max_tokens"
    assert not fine.is_error and structured(fine)["data"]["results"]


def test_unknown_tool_is_a_protocol_error_and_the_session_keeps_serving(seeded: Seeded) -> None:
    async def body(client: Client) -> tuple[MCPError | None, Any]:
        raised = None
        try:
            await client.call_tool("drop_everything", {})
        except MCPError as exc:
            raised = exc
        return raised, await client.call_tool("search_graph", {"query": "billing-api"})

    raised, after = session(seeded.key, body)
    assert raised is not None and "Unknown tool: drop_everything" in str(raised)
    assert not after.is_error


def test_scope_reach_and_key_errors(seeded: Seeded) -> None:
    ports = get_ports()
    reader = mint(ports, ["demo"], ["api:read"], "reader")
    outsider = mint(ports, ["elsewhere"], ["api:read", "api:write"], "outsider")
    denied = envelope(call(reader, "write_memory", {"type": "note", "name": "n", "body": "b"}), "FORBIDDEN")
    assert denied["details"]["code"] == "INSUFFICIENT_SCOPE"
    assert not call(reader, "search_graph", {"query": "billing-api"}).is_error
    envelope(call(outsider, "search_graph", {"workspaceId": "demo", "query": "billing-api"}), "NOT_FOUND")
    envelope(call(outsider, "list_knowledge_bases", {"workspaceId": "demo"}), "NOT_FOUND")
    envelope(call("akb_nope_nope", "search_graph", {"workspaceId": "demo", "query": "x"}), "UNAUTHORIZED")
    envelope(call(None, "list_knowledge_bases", {"workspaceId": "demo"}), "UNAUTHORIZED")


def test_the_workspace_is_implied_only_when_the_key_reaches_exactly_one(seeded: Seeded) -> None:
    two = mint(get_ports(), ["demo", "other"], ["api:read"], "two")
    missing = envelope(call(two, "search_graph", {"query": "billing-api"}), "BAD_REQUEST")
    assert missing["details"][0]["path"] == "workspaceId"
    assert not call(two, "search_graph", {"workspaceId": "demo", "query": "billing-api"}).is_error
    given = session(two, lambda client: client.call_tool("search_graph", {"query": "billing-api"}), workspace="demo")
    assert not given.is_error  # --workspace sets the default for such keys


def test_the_per_key_rate_limit_answers_rate_limited_with_a_retry_hint(seeded: Seeded,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "2")
    reset_settings()
    reset_ports()
    key = mint(get_ports(), ["demo"], ["api:read"], "limited")

    async def body(client: Client) -> list[Any]:
        return [await client.call_tool("search_graph", {"query": "billing-api"}) for _ in range(3)] + [
            await client.call_tool("list_knowledge_bases", {})]

    first, second, third, listing = session(key, body)
    assert not first.is_error and not second.is_error
    limited = envelope(third, "RATE_LIMITED")
    assert limited["details"]["retryAfter"].endswith("Z") and "\nRetry after " in text(third)
    envelope(listing, "RATE_LIMITED")  # every tool spends the same per-key budget
