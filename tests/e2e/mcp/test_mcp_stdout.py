"""stdout belongs to the protocol: `agentkb mcp` started as a client's configuration starts it (a bare environment,
only AGENTKB_KEY set, no POWERTOOLS_METRICS_DISABLED) writes nothing but JSON-RPC to stdout, through every tool
and the end of the session; over `--http` stdout carries the announced address and nothing else."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import ROOT, agentkb_command, started, stop, structured

pytestmark = pytest.mark.e2e

TEE = Path(__file__).with_name("tee_stdout.py")
LONG_SESSION = 50  # tool calls: their handlers' metric lines alone would exceed 8 KiB


def bare_env(key: str) -> dict[str, str]:
    """What an agent's launcher gives the server: PATH, HOME, the key; PYTHONPATH only to run this source tree."""
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"), "AGENTKB_KEY": key,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)])}


@pytest.fixture()
def data_dir(seeded_dir: Seeded, tmp_path: Path) -> Path:
    """A copy of the seeded data directory: the session below writes a memory and a snapshot."""
    return Path(shutil.copytree(seeded_dir.data_dir, tmp_path / "data"))


async def every_tool(client: Client, kb: str) -> list[Any]:
    """Each tool once, a rejected argument (a 4xx answer, counted as such by the handlers' metrics) and an unknown
    tool (a protocol error)."""
    results = [
        await client.list_tools(),
        await client.call_tool("list_knowledge_bases", {}),
        await client.call_tool("search_knowledge", {"knowledgeBaseIds": [kb], "query": "reset my password"}),
        await client.call_tool("search_knowledge", {"knowledgeBaseIds": [kb], "query": "x", "topK": 101}),
        await client.call_tool("search_graph", {"query": "billing-api"}),
        await client.call_tool("recall", {"query": "how does billing-api deploy?"}),
        await client.call_tool("write_memory", {"type": "note", "name": "stdout-hygiene",
                                                "body": "The MCP stdio channel carries JSON-RPC only."}),
        await client.call_tool("create_snapshot", {"scope": {"maxClassification": "internal"},
                                                   "budget": {"maxTokens": 1000}, "task": "Check stdout."})]
    try:
        await client.call_tool("drop_everything", {})
    except Exception as exc:  # noqa: BLE001  (the SDK raises MCPError; anything else fails the check below)
        results.append(exc)
    return results


def check_every_tool(results: list[Any]) -> None:
    listed, kbs, hits, too_many, graph, recalled, written, snapshot, unknown = results
    assert len(listed.tools) == 6
    for result in (kbs, hits, graph, recalled, written, snapshot):
        assert not result.is_error, result
    assert too_many.is_error and structured(too_many)["error"]["code"] == "BAD_REQUEST"
    assert "Unknown tool: drop_everything" in str(unknown)


def captured_session(capture: Path, server_args: list[str], key: str, body: Callable[[Client], Awaitable[Any]],
                     **extra_env: str) -> tuple[Any, list[bytes]]:
    """Run `body` in a stdio session with the server behind the tee; (its result, every stdout line)."""
    env = {**bare_env(key), **extra_env}
    params = StdioServerParameters(command=sys.executable,
                                   args=[str(TEE), str(capture), *agentkb_command("mcp", *server_args)], env=env)

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=120) as client:
            return await body(client)

    result = anyio.run(main)
    deadline = time.monotonic() + 60
    while not (capture / "done").exists():  # the server exits on stdin's end; its last writes are the point
        if time.monotonic() > deadline:
            os.kill(int((capture / "pid").read_text()), signal.SIGKILL)
            raise AssertionError("agentkb mcp did not exit within 60 s of the session's end")
        time.sleep(0.05)
    return result, (capture / "stdout").read_bytes().splitlines()


def assert_only_json_rpc(lines: list[bytes], at_least: int) -> None:
    for line in lines:
        try:
            mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError:
            raise AssertionError(f"a stdout line that is not JSON-RPC: {line[:300]!r}") from None
    assert len(lines) >= at_least, lines  # every response was seen on the wire


@pytest.mark.parametrize("metrics", [{}, {"POWERTOOLS_METRICS_DISABLED": "false"}], ids=["bare", "metrics-on"])
def test_stdio_on_the_local_engine_writes_only_json_rpc(seeded_dir: Seeded, data_dir: Path, tmp_path: Path,
                                                        metrics: dict[str, str]) -> None:
    """Bare, as a launcher starts it; and with metrics asked for, whose lines then go to stderr, not the wire."""
    assert not any(name.startswith("POWERTOOLS") for name in bare_env(seeded_dir.key))
    results, lines = captured_session(tmp_path, ["--data-dir", str(data_dir)], seeded_dir.key,
                                      lambda client: every_tool(client, seeded_dir.kb), **metrics)
    check_every_tool(results)
    assert_only_json_rpc(lines, at_least=len(results))


def test_stdio_against_a_running_api_writes_only_json_rpc(seeded_dir: Seeded, api_base: str, tmp_path: Path) -> None:
    results, lines = captured_session(tmp_path, ["--url", api_base, "--workspace", "demo"], seeded_dir.key,
                                      lambda client: every_tool(client, seeded_dir.kb))
    check_every_tool(results)
    assert_only_json_rpc(lines, at_least=len(results))


def test_http_stdout_carries_the_address_and_nothing_else(seeded_dir: Seeded, data_dir: Path) -> None:
    env = {k: v for k, v in bare_env(seeded_dir.key).items() if k != "AGENTKB_KEY"}
    proc, url = started(agentkb_command("mcp", "--http", "--port", "0", "--data-dir", str(data_dir)), env,
                        r"(http://127\.0\.0\.1:\d+/mcp)")

    async def main() -> list[Any]:
        async with (httpx2.AsyncClient(headers={"X-API-Key": seeded_dir.key}, timeout=httpx2.Timeout(120)) as http,
                    Client(streamable_http_client(url, http_client=http)) as client):
            results = await every_tool(client, seeded_dir.kb)
            # A long-running server: more than Python's 8 KiB stdout buffer of anything printed gets written out
            # (uvicorn ends on SIGTERM by re-raising it, so nothing buffered is flushed at exit)
            return [*results, *[await client.call_tool("list_knowledge_bases", {}) for _ in range(LONG_SESSION)]]

    try:
        results = anyio.run(main)
    finally:
        stop(proc)
    check_every_tool(results[:-LONG_SESSION])
    assert not any(result.is_error for result in results[-LONG_SESSION:])
    rest = proc.stdout.read() if proc.stdout else ""
    assert rest == "", rest[:300]
