"""`agentkb mcp` overhead: a tool call through the SDK's client vs the same request straight into the handler.

Seeds the demo workspace in a temporary data directory, then times N calls of search_knowledge (hybrid, topK 5)
three ways: the REST v1 event into the Lambda handler (what `agentkb serve` does per request), the in-memory SDK
client (tool layer + SDK framing, no process boundary), and a stdio subprocess (`agentkb mcp`, JSON-RPC over
pipes). Also the stdio start-up: spawn to the first `tools/list` answer, and the in-memory client naming the
knowledge base ("handbook": one more API call, the listing that resolves the name).

    .venv/bin/python -m bench.latency.mcp_overhead --calls 200
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = 10
QUERIES = ("How do I reset my password?", "when are failed payments retried", "rotate an API key",
           "incident escalation", "export invoices", "single sign-on")


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 2)}


def arguments(kb: str, i: int) -> dict[str, Any]:
    return {"knowledgeBaseIds": [kb], "query": QUERIES[i % len(QUERIES)], "topK": 5}


def handler_samples(key: str, kb: str, calls: int) -> list[float]:
    from agentkb.local.server import dispatch, to_rest_event

    samples = []
    for i in range(calls):
        body = json.dumps({"workspaceId": "demo", **arguments(kb, i)}).encode()
        started = time.perf_counter()
        event = to_rest_event("POST", "/api/v2/knowledge/search",
                              {"Content-Type": "application/json", "X-API-Key": key}, body)
        assert dispatch(event)["statusCode"] == 200
        samples.append(time.perf_counter() - started)
    return samples


async def client_samples(client: Any, kb: str, calls: int) -> list[float]:
    samples = []
    for i in range(calls):
        started = time.perf_counter()
        result = await client.call_tool("search_knowledge", arguments(kb, i))
        samples.append(time.perf_counter() - started)
        assert not result.is_error, result
    return samples


async def run_clients(key: str, kb: str, data_dir: Path, calls: int) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    from agentkb.local.demo import KB_NAME
    from agentkb.mcp.backends import InProcessApi
    from agentkb.mcp.server import ToolRunner, build_server

    out: dict[str, Any] = {}
    direct: list[float] = []
    in_memory: list[float] = []
    by_name: list[float] = []
    async with Client(build_server(ToolRunner(InProcessApi(), "demo"), key)) as client:
        await client_samples(client, kb, 10)  # warm
        for _ in range(ROUNDS):  # interleaved, so load on the shared machine hits both alike
            direct += handler_samples(key, kb, calls // ROUNDS)
            in_memory += await client_samples(client, kb, calls // ROUNDS)
            by_name += await client_samples(client, KB_NAME, calls // ROUNDS)
    out["handler"], out["in_memory_client"] = percentiles(direct), percentiles(in_memory)
    out["in_memory_client_by_name"] = percentiles(by_name)
    env = {**os.environ, "AGENTKB_KEY": key, "AGENTKB_DATA_DIR": str(data_dir)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "agentkb.cli.main", "mcp"], env=env)
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=120) as client:
        await client.list_tools()
        out["stdio_startup_s"] = round(time.perf_counter() - started, 2)
        await client_samples(client, kb, 10)
        out["stdio_subprocess"] = percentiles(await client_samples(client, kb, calls))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentkb-bench-mcp-") as tmp:
        os.environ.update({"AGENTKB_DATA_DIR": tmp, "AGENTKB_RATE_LIMIT_PER_MINUTE": "1000000",
                           "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"})
        import anyio

        from agentkb.composition import get_ports
        from agentkb.local.demo import setup

        state = setup(get_ports())
        key, kb = state["key"], state["kb"].id
        handler_samples(key, kb, 10)  # warm the model and the caches
        result = {"bench": "mcp", "calls": args.calls, **anyio.run(run_clients, key, kb, Path(tmp), args.calls)}
        print(json.dumps(result))


if __name__ == "__main__":
    main()
