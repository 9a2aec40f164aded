"""Load: N keep-alive clients against `agentkb serve` on loopback (demo data) for a bounded time.

Mixed workload over the routes that exist: knowledge search (hybrid + vector), graph search, recall, snapshot
create + get, tag listing. Prints one JSON line: throughput, p50/p99 latency (ms), errors (non-2xx or transport).

    .venv/bin/python bench/load.py --seconds 20 --clients 8
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_server import demo_server  # noqa: E402

QUERIES = ["How do I reset my password?", "failed payments retried", "invoice billing api", "data retention",
           "incident runbook escalation", "search tips"]


def workload(kb: str, i: int, snapshot_ids: list[str]) -> tuple[str, str, str, dict[str, Any] | None]:
    """(name, method, path, body) for request number i of a client."""
    q = QUERIES[i % len(QUERIES)]
    kind = i % 8
    if kind in (0, 1):
        return "search_hybrid", "POST", "/api/v2/knowledge/search", {"workspaceId": "demo", "knowledgeBaseIds": [kb],
                                                                     "query": q, "topK": 5}
    if kind == 2:
        return "search_vector", "POST", "/api/v2/knowledge/search", {"workspaceId": "demo", "knowledgeBaseIds": [kb],
                                                                     "query": q, "searchMode": "vector"}
    if kind == 3:
        return "graph_search", "POST", "/v1/graph/search", {"workspaceId": "demo", "query": "billing", "limit": 10}
    if kind == 4:
        return "recall", "POST", "/v1/recall", {
            "schema_version": "openbrain.openclaw.recall.v1", "workspace_id": "demo", "task_type": "code_review",
            "query": q, "entities": {"repos": ["billing-api"]},
            "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
                      "include_stale": False}, "limits": {"max_items": 5, "max_tokens": 2000},
            "sensitivity": {"contains_code": False, "contains_customer_data": False,
                            "contains_private_meeting_data": False}}
    if kind == 5:
        return "snapshot_create", "POST", "/v1/snapshots", {
            "runId": str(uuid.uuid4()), "attemptId": str(uuid.uuid4()),
            "scope": {"workspaceId": "demo", "maxClassification": "internal"}, "budget": {"maxTokens": 1024},
            "task": q, "sources": {"knowledge": {"knowledgeBaseIds": [kb], "query": q, "topK": 5}}}
    if kind == 6 and snapshot_ids:
        return "snapshot_get", "GET", f"/v1/snapshots/{snapshot_ids[i % len(snapshot_ids)]}", None
    return "list_tags", "GET", f"/api/v2/knowledge/bases/{kb}/tags?workspaceId=demo", None


def client(server: dict[str, Any], deadline: float, results: list[tuple[str, float, int]],
           snapshot_ids: list[str], lock: threading.Lock, offset: int) -> None:
    conn = http.client.HTTPConnection(server["host"], server["port"], timeout=60)
    headers = {"X-API-Key": server["key"], "Content-Type": "application/json", "Connection": "keep-alive"}
    i = offset
    while time.monotonic() < deadline:
        name, method, path, body = workload(server["kb"], i, snapshot_ids)
        i += 1
        started = time.perf_counter()
        try:
            conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
            response = conn.getresponse()
            payload = response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            status, payload = 0, b""
            conn.close()
            conn = http.client.HTTPConnection(server["host"], server["port"], timeout=60)
        elapsed = time.perf_counter() - started
        with lock:
            results.append((name, elapsed, status))
            if name == "snapshot_create" and status == 201 and len(snapshot_ids) < 200:
                snapshot_ids.append(json.loads(payload)["snapshotId"])
    conn.close()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else 0.0


def run(seconds: float, clients: int) -> dict[str, Any]:
    with demo_server({"AGENTKB_RATE_LIMIT_PER_MINUTE": "1000000"}) as server:
        results: list[tuple[str, float, int]] = []
        snapshot_ids: list[str] = []
        lock = threading.Lock()
        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(server, started + seconds, results, snapshot_ids, lock, n))
                   for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
    latencies = [r[1] * 1000 for r in results]
    errors = [r for r in results if not 200 <= r[2] < 300]
    per_route = {name: {"requests": sum(1 for r in results if r[0] == name),
                        "p50Ms": round(percentile([r[1] * 1000 for r in results if r[0] == name], 50), 1),
                        "p99Ms": round(percentile([r[1] * 1000 for r in results if r[0] == name], 99), 1)}
                 for name in sorted({r[0] for r in results})}
    return {"bench": "load", "clients": clients, "seconds": round(wall, 1), "requests": len(results),
            "throughputRps": round(len(results) / wall, 1), "p50Ms": round(percentile(latencies, 50), 1),
            "p99Ms": round(percentile(latencies, 99), 1), "errors": len(errors),
            "errorStatuses": dict(Counter(str(r[2]) for r in errors)), "perRoute": per_route}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    result = run(args.seconds, args.clients)
    print(json.dumps(result, separators=(",", ":")))
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
