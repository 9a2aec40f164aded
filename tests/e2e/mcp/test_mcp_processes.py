"""`agentkb mcp` as agents run it, through the official SDK's clients: stdio against a subprocess (--data-dir and
--url against `agentkb serve` on loopback port 0), and streamable HTTP (`--http --port 0`) with per-request keys."""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import agentkb_command, started, stop, structured, subprocess_env, text
from tests.helpers import ERROR_RESPONSE, SEARCH_RESPONSE

pytestmark = pytest.mark.e2e


def stdio(seeded: Seeded, *args: str, key: str | None = None) -> StdioServerParameters:
    env = subprocess_env(seeded.data_dir, AGENTKB_KEY=key or seeded.key)
    command = agentkb_command("mcp", *args)
    return StdioServerParameters(command=command[0], args=command[1:], env=env)


def run(server: Any, body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with Client(server, read_timeout_seconds=120) as client:
            return await body(client)

    return anyio.run(main)


async def search_then_errors(client: Client, kb: str) -> list[Any]:
    return [await client.call_tool("search_knowledge", {"knowledgeBaseIds": [kb], "query": "reset my password"}),
            await client.call_tool("search_knowledge", {"knowledgeBaseIds": [kb], "query": "x", "topK": 101}),
            await client.call_tool("recall", {"query": "how does billing-api deploy?"})]


def assert_search_then_errors(results: list[Any]) -> None:
    hits, invalid, recalled = results
    SEARCH_RESPONSE.validate(structured(hits))
    assert text(hits).splitlines()[1].startswith("1. password-reset.md")
    assert invalid.is_error and structured(invalid)["error"]["code"] == "BAD_REQUEST"
    ERROR_RESPONSE.validate(structured(invalid))
    assert not recalled.is_error and structured(recalled)["direct_matches"][0]["name"] == "billing-deploy-policy"


def test_stdio_on_the_local_engine(seeded_dir: Seeded) -> None:
    async def body(client: Client) -> list[Any]:
        listed = await client.list_tools()
        assert len(listed.tools) == 6
        return await search_then_errors(client, seeded_dir.kb)

    assert_search_then_errors(run(stdio(seeded_dir, "--data-dir", str(seeded_dir.data_dir)), body))


def test_stdio_refuses_to_start_without_a_valid_key(seeded_dir: Seeded) -> None:
    env = subprocess_env(seeded_dir.data_dir)
    missing = subprocess.run(agentkb_command("mcp"), env=env, capture_output=True, text=True, timeout=120,
                             stdin=subprocess.DEVNULL, check=False)
    assert missing.returncode == 2 and missing.stderr.startswith("error: AGENTKB_KEY is not set")
    revoked = subprocess.run(agentkb_command("mcp"), env={**env, "AGENTKB_KEY": "akb_0000_nope"}, text=True,
                             capture_output=True, timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert revoked.returncode == 2 and "not a valid key" in revoked.stderr


def test_stdio_against_a_running_api(seeded_dir: Seeded, api_base: str) -> None:
    async def body(client: Client) -> list[Any]:
        return [*await search_then_errors(client, seeded_dir.kb), await client.call_tool("list_knowledge_bases", {})]

    *results, listing = run(stdio(seeded_dir, "--url", api_base, "--workspace", "demo"), body)
    assert_search_then_errors(results)
    assert [kb["id"] for kb in structured(listing)["data"]] == [seeded_dir.kb]


def test_an_unreachable_api_is_a_retryable_tool_error(seeded_dir: Seeded) -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run(stdio(seeded_dir, "--url", f"http://127.0.0.1:{port}", "--workspace", "demo"),
                 lambda client: client.call_tool("search_graph", {"query": "billing-api"}))
    assert result.is_error and structured(result)["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert "Retry after 5 s." in text(result)


@pytest.fixture(scope="module")
def mcp_http(seeded_dir: Seeded) -> Iterator[str]:
    """`agentkb mcp --http` on loopback port 0; AGENTKB_KEY is set but must never stand in for a client's key."""
    env = subprocess_env(seeded_dir.data_dir, AGENTKB_KEY=seeded_dir.key)
    proc, url = started(agentkb_command("mcp", "--http", "--port", "0"), env, r"(http://127\.0\.0\.1:\d+/mcp)")
    try:
        yield url
    finally:
        stop(proc)


def over_http(url: str, headers: dict[str, str], body: Callable[[Client], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with (httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120)) as http,
                    Client(streamable_http_client(url, http_client=http)) as client):
            return await body(client)

    return anyio.run(main)


def test_streamable_http_with_the_clients_own_key(seeded_dir: Seeded, mcp_http: str) -> None:
    async def body(client: Client) -> list[Any]:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} >= {"search_knowledge", "write_memory"}
        return await search_then_errors(client, seeded_dir.kb)

    assert_search_then_errors(over_http(mcp_http, {"X-API-Key": seeded_dir.key}, body))
    bearer = over_http(mcp_http, {"Authorization": f"Bearer {seeded_dir.key}"},
                       lambda client: client.call_tool("list_knowledge_bases", {}))
    assert [kb["id"] for kb in structured(bearer)["data"]] == [seeded_dir.kb]


def test_streamable_http_without_a_key_is_unauthorized(mcp_http: str) -> None:
    result = over_http(mcp_http, {}, lambda client: client.call_tool("search_graph", {"workspaceId": "demo",
                                                                                     "query": "billing-api"}))
    assert result.is_error and structured(result)["error"]["code"] == "UNAUTHORIZED"



def test_streamable_http_in_front_of_a_running_api(seeded_dir: Seeded, api_base: str) -> None:
    """`--http --url`: a networked MCP door for a remote API, each client's key passed through to it."""
    env = subprocess_env(seeded_dir.data_dir)
    proc, url = started(agentkb_command("mcp", "--http", "--port", "0", "--url", api_base, "--workspace", "demo"),
                        env, r"(http://127\.0\.0\.1:\d+/mcp)")
    try:
        hits = over_http(url, {"Authorization": f"Bearer {seeded_dir.key}"}, lambda client: client.call_tool(
            "search_knowledge", {"knowledgeBaseIds": seeded_dir.kb, "query": "reset my password", "topK": 2}))
        anonymous = over_http(url, {}, lambda client: client.call_tool("search_graph", {"query": "billing-api"}))
    finally:
        stop(proc)
    assert structured(hits)["data"]["results"][0]["documentName"] == "password-reset.md"
    assert anonymous.is_error and structured(anonymous)["error"]["code"] == "UNAUTHORIZED"
