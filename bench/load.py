"""Load and soak: N keep-alive clients against `agentkb serve` on loopback (demo data) for a bounded time.

Mixed reads and writes: knowledge search (hybrid + vector), graph search, recall, snapshot create + get, tag
listing, document writes and deletes, memory writes. Each client cycles through a bounded set of document and
memory names (a write replaces, a delete removes), so the data stays the same size and memory growth means a
leak. Prints one JSON line: throughput, p50/p99 latency (ms), errors (non-2xx or transport) and the server's
resident memory (RSS) at start, at the end and sampled along the way.

    .venv/bin/python bench/load.py --seconds 20 --clients 8            # the benchmark
    .venv/bin/python bench/load.py --seconds 600 --clients 8           # the 10-minute soak (README, Reliability)
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


ERROR_SAMPLES: list[str] = []  # the first failed requests, to say what failed (never a stack trace: the server's)
WRITE_NAMES = 20  # document and memory names per client: writes replace, so the data does not grow


def workload(kb: str, i: int, snapshot_ids: list[str], client_id: int = 0,
             doc_ids: dict[str, str] | None = None) -> tuple[str, str, str, dict[str, Any] | None]:
    """(name, method, path, body) for request number i of a client."""
    q = QUERIES[i % len(QUERIES)]
    kind = i % 10
    slot = (i // 10) % WRITE_NAMES
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
    if kind == 8:
        return "document_write", "POST", f"/api/v2/knowledge/bases/{kb}/documents", {
            "workspaceId": "demo", "name": f"soak/{client_id}/{slot}.md",
            "content": f"Soak note {i} of client {client_id}. {q} The billing runbook revision {i} says to "
                       "retry failed payments three times and page the on-call engineer after the third failure."}
    if kind == 9 and doc_ids and slot % 2:
        doc_id = doc_ids.pop(next(iter(doc_ids)))  # the oldest live document of this client
        return "document_delete", "DELETE", f"/api/v2/knowledge/bases/{kb}/documents/{doc_id}?workspaceId=demo", None
    if kind == 9:
        return "memory_write", "POST", "/v1/memories", {
            "workspace_id": "demo", "visibility": "workspace", "type": "note", "name": f"soak-{client_id}-{slot}",
            "body": f"Soak memory {i}: {q} is handled by the billing team; revision {i}."}
    return "list_tags", "GET", f"/api/v2/knowledge/bases/{kb}/tags?workspaceId=demo", None


def client(server: dict[str, Any], deadline: float, results: list[tuple[str, float, int]],
           snapshot_ids: list[str], lock: threading.Lock, offset: int) -> None:
    conn = http.client.HTTPConnection(server["host"], server["port"], timeout=60)
    headers = {"X-API-Key": server["key"], "Content-Type": "application/json", "Connection": "keep-alive"}
    i = offset
    doc_ids: dict[str, str] = {}  # name -> id of this client's live documents (a rewrite keeps the id)
    while time.monotonic() < deadline:
        name, method, path, body = workload(server["kb"], i, snapshot_ids, offset, doc_ids)
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
        if name == "document_write" and status in (200, 201, 202):
            doc_ids[body["name"]] = json.loads(payload)["data"]["id"]  # type: ignore[index]
        with lock:
            results.append((name, elapsed, status))
            if not 200 <= status < 300 and len(ERROR_SAMPLES) < 10:
                ERROR_SAMPLES.append(f"{name} {method} {path} -> {status}: {payload[:300]!r}")
            if name == "snapshot_create" and status == 201 and len(snapshot_ids) < 200:
                snapshot_ids.append(json.loads(payload)["snapshotId"])
    conn.close()


def rss_mb(pid: int) -> float:
    """Resident set size of a process (Linux /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def sample_rss(pid: int, deadline: float, every_s: float, samples: list[tuple[float, float]]) -> None:
    started = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(min(every_s, max(0.0, deadline - time.monotonic())))
        samples.append((round(time.monotonic() - started, 1), rss_mb(pid)))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else 0.0


def run(seconds: float, clients: int, sample_every_s: float = 30.0) -> dict[str, Any]:
    with demo_server({"AGENTKB_RATE_LIMIT_PER_MINUTE": "1000000"}) as server:
        results: list[tuple[str, float, int]] = []
        snapshot_ids: list[str] = []
        lock = threading.Lock()
        rss_start, data_start = rss_mb(server["pid"]), dir_mb(server["data_dir"])
        samples: list[tuple[float, float]] = []
        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(server, started + seconds, results, snapshot_ids, lock, n))
                   for n in range(clients)]
        sampler = threading.Thread(target=sample_rss, args=(server["pid"], started + seconds, sample_every_s, samples),
                                   daemon=True)
        for t in [*threads, sampler]:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
        rss_end = rss_mb(server["pid"])
        data_end = dir_mb(server["data_dir"])
    return summary(results, wall, clients) | {"rss": rss_summary(rss_start, rss_end, samples),
                                              "dataDirMb": {"start": data_start, "end": data_end}}


def dir_mb(path: Path) -> float:
    """On-disk size of the server's data directory (SQLite database, WAL, keys), in MiB."""
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def rss_summary(start: float, end: float, samples: list[tuple[float, float]]) -> dict[str, Any]:
    """Start and end RSS, and the growth over the second half of the run (after caches and models have loaded)."""
    half = [mb for t, mb in samples if t >= (samples[-1][0] / 2 if samples else 0)]
    return {"startMb": start, "endMb": end, "maxMb": max([end, *(mb for _, mb in samples)]),
            "secondHalfGrowthMb": round(end - half[0], 1) if half else None,
            "samples": [[t, mb] for t, mb in samples]}


def summary(results: list[tuple[str, float, int]], wall: float, clients: int) -> dict[str, Any]:
    latencies = [r[1] * 1000 for r in results]
    errors = [r for r in results if not 200 <= r[2] < 300]
    per_route = {name: {"requests": sum(1 for r in results if r[0] == name),
                        "p50Ms": round(percentile([r[1] * 1000 for r in results if r[0] == name], 50), 1),
                        "p99Ms": round(percentile([r[1] * 1000 for r in results if r[0] == name], 99), 1)}
                 for name in sorted({r[0] for r in results})}
    return {"bench": "load", "clients": clients, "seconds": round(wall, 1), "requests": len(results),
            "throughputRps": round(len(results) / wall, 1), "p50Ms": round(percentile(latencies, 50), 1),
            "p99Ms": round(percentile(latencies, 99), 1), "errors": len(errors),
            "errorStatuses": dict(Counter(str(r[2]) for r in errors)), "errorSamples": ERROR_SAMPLES,
            "perRoute": per_route}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--sample-every", type=float, default=30.0, help="seconds between RSS samples")
    args = parser.parse_args()
    result = run(args.seconds, args.clients, args.sample_every)
    print(json.dumps(result, separators=(",", ":")))
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
