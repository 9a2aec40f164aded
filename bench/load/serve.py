"""Load and soak: N keep-alive clients against `agentkb serve` on loopback (demo data) for a bounded time.

Mixed reads and writes: knowledge search (hybrid + vector), graph search, recall, snapshot create + get, tag
listing, document writes and deletes, memory writes. Each client cycles through a bounded set of document and
memory names (a write replaces, a delete removes). Prints one JSON line: throughput, p50/p99 latency (ms), errors
(non-2xx or transport) and the server's resident memory (RSS) and data directory size, sampled along the way.

`--steady` keeps the stored data the same size, so RSS growth can only be the process's own: memory writes
alternate with forgetting the client's oldest memory (every revision), and snapshot builds cycle through a
bounded set of run ids per client (a repeat is an idempotent replay: snapshots are kept by design, no route
deletes one), and document and memory texts cycle through REVISIONS variants per name (the embedding cache keeps
a vector per distinct chunk text). The report then carries the RSS slope (least squares, MB per minute) over the
second half, for the whole RSS and for its anonymous part (the heap, without mapped files).

    .venv/bin/python -m bench.load.serve --seconds 20 --clients 8                          # the benchmark
    .venv/bin/python -m bench.load.serve --seconds 600 --clients 8 --steady --sample-every 10   # the 10-minute soak
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.local_server import demo_server

QUERIES = ["How do I reset my password?", "failed payments retried", "invoice billing api", "data retention",
           "incident runbook escalation", "search tips"]


ERROR_SAMPLES: list[str] = []  # the first failed requests, to say what failed (never a stack trace: the server's)
WRITE_NAMES = 20  # document and memory names per client: writes replace, so the data does not grow
REVISIONS = 3  # steady mode: texts per name, so every text has been written (and cached) after a few minutes


@dataclass
class ClientState:
    """What one client wrote and may remove: live documents (name -> id) and, in steady mode, memory ids."""

    client_id: int
    steady: bool = False
    doc_ids: dict[str, str] = field(default_factory=dict)  # a rewrite keeps the id: delete each only once
    memory_ids: dict[str, int] = field(default_factory=dict)  # name -> id; forgetting one forgets every revision


def workload(kb: str, i: int, snapshot_ids: list[str], state: ClientState) -> tuple[str, str, str, Any]:
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
        return "snapshot_create", "POST", "/v1/snapshots", snapshot_body(kb, q, state, slot)
    if kind == 6 and snapshot_ids:
        return "snapshot_get", "GET", f"/v1/snapshots/{snapshot_ids[i % len(snapshot_ids)]}", None
    if kind in (8, 9):
        return write(kb, i, q, state, slot)
    return "list_tags", "GET", f"/api/v2/knowledge/bases/{kb}/tags?workspaceId=demo", None


def snapshot_body(kb: str, q: str, state: ClientState, slot: int) -> dict[str, Any]:
    """A fresh run, or in steady mode one of the client's WRITE_NAMES runs (same ids, same body: a replay)."""
    if state.steady:
        run_id, attempt_id = (str(uuid.uuid5(uuid.NAMESPACE_URL, f"soak/{state.client_id}/{slot}/{part}"))
                              for part in ("run", "attempt"))
        q = QUERIES[slot % len(QUERIES)]
    else:
        run_id, attempt_id = str(uuid.uuid4()), str(uuid.uuid4())
    return {"runId": run_id, "attemptId": attempt_id, "scope": {"workspaceId": "demo", "maxClassification": "internal"},
            "budget": {"maxTokens": 1024}, "task": q,
            "sources": {"knowledge": {"knowledgeBaseIds": [kb], "query": q, "topK": 5}}}


def write(kb: str, i: int, q: str, state: ClientState, slot: int) -> tuple[str, str, str, Any]:
    """Request kinds 8 and 9: a document write, or a document delete, memory write or (steady) memory forget."""
    # Steady: a bounded set of texts too (the embedding cache keeps a vector per distinct chunk text ever written)
    revision = (i // (10 * WRITE_NAMES)) % REVISIONS if state.steady else i
    if i % 10 == 8:
        return "document_write", "POST", f"/api/v2/knowledge/bases/{kb}/documents", {
            "workspaceId": "demo", "name": f"soak/{state.client_id}/{slot}.md",
            "content": f"Soak note {revision} of client {state.client_id}. {q} The billing runbook revision "
                       f"{revision} says to retry failed payments three times and page the on-call engineer after "
                       "the third failure."}
    if state.doc_ids and slot % 2:
        doc_id = state.doc_ids.pop(next(iter(state.doc_ids)))  # the oldest live document of this client
        return "document_delete", "DELETE", f"/api/v2/knowledge/bases/{kb}/documents/{doc_id}?workspaceId=demo", None
    if state.steady and state.memory_ids and slot % 4 == 0:
        memory_id = state.memory_ids.pop(next(iter(state.memory_ids)))  # the client's oldest memory name
        return "memory_forget", "DELETE", f"/v1/memories/{memory_id}?workspace_id=demo", None
    return "memory_write", "POST", "/v1/memories", {
        "workspace_id": "demo", "visibility": "workspace", "type": "note", "name": f"soak-{state.client_id}-{slot}",
        "body": f"Soak memory {revision}: {q} is handled by the billing team; revision {revision}."}


def client(server: dict[str, Any], deadline: float, results: list[tuple[str, float, int]],
           snapshot_ids: list[str], lock: threading.Lock, state: ClientState) -> None:
    conn = http.client.HTTPConnection(server["host"], server["port"], timeout=60)
    headers = {"X-API-Key": server["key"], "Content-Type": "application/json", "Connection": "keep-alive"}
    i = state.client_id
    while time.monotonic() < deadline:
        name, method, path, body = workload(server["kb"], i, snapshot_ids, state)
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
        remember(state, name, body, status, payload)
        with lock:
            results.append((name, elapsed, status))
            if not 200 <= status < 300 and len(ERROR_SAMPLES) < 10:
                ERROR_SAMPLES.append(f"{name} {method} {path} -> {status}: {payload[:300]!r}")
            if name == "snapshot_create" and status == 201 and len(snapshot_ids) < 200:
                snapshot_ids.append(json.loads(payload)["snapshotId"])
    conn.close()


def remember(state: ClientState, name: str, body: Any, status: int, payload: bytes) -> None:
    """Track what the client may delete later: its live documents and (steady) its memories."""
    if name == "document_write" and status in (200, 201, 202):
        state.doc_ids[body["name"]] = json.loads(payload)["data"]["id"]
    elif name == "memory_write" and status in (200, 201) and state.steady:
        state.memory_ids.setdefault(body["name"], json.loads(payload)["memory_id"])


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """Resident set size of a process (Linux /proc), in MiB; `RssAnon`: the heap part, without mapped files."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def sample_rss(pid: int, data_dir: Path, deadline: float, every_s: float,
               samples: list[tuple[float, float, float, float]]) -> None:
    """(seconds since start, RSS MiB, data directory MiB, anonymous RSS MiB) every `every_s` until the deadline.

    The anonymous part is the process's own heap; the rest maps files (SQLite, the tantivy segments, the model)."""
    started = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(min(every_s, max(0.0, deadline - time.monotonic())))
        samples.append((round(time.monotonic() - started, 1), rss_mb(pid), dir_mb(data_dir), rss_mb(pid, "RssAnon")))


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else 0.0


def run(seconds: float, clients: int, sample_every_s: float = 30.0, steady: bool = False,
        serve_args: tuple[str, ...] = ()) -> dict[str, Any]:
    with demo_server({"AGENTKB_RATE_LIMIT_PER_MINUTE": "1000000"}, serve_args=serve_args) as server:
        results: list[tuple[str, float, int]] = []
        snapshot_ids: list[str] = []
        lock = threading.Lock()
        rss_start, data_start = rss_mb(server["pid"]), dir_mb(server["data_dir"])
        samples: list[tuple[float, float, float, float]] = []
        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(server, started + seconds, results, snapshot_ids, lock,
                                                         ClientState(n, steady)))
                   for n in range(clients)]
        sampler = threading.Thread(target=sample_rss, args=(server["pid"], server["data_dir"], started + seconds,
                                                            sample_every_s, samples), daemon=True)
        for t in [*threads, sampler]:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
        rss_end = rss_mb(server["pid"])
        data_end = dir_mb(server["data_dir"])
    return summary(results, wall, clients) | {"steady": steady, "serveArgs": list(serve_args),
                                              "rss": rss_summary(rss_start, rss_end, samples),
                                              "dataDirMb": {"start": data_start, "end": data_end}}


def dir_mb(path: Path) -> float:
    """On-disk size of the server's data directory (SQLite database, WAL, keys), in MiB."""
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def rss_summary(start: float, end: float, samples: list[tuple[float, float, float, float]]) -> dict[str, Any]:
    """Start, middle and end RSS, and the growth and slope over the second half (after caches and models loaded)."""
    half = [s for s in samples if s[0] >= samples[-1][0] / 2] if samples else []
    return {"startMb": start, "middleMb": samples[(len(samples) - 1) // 2][1] if samples else None, "endMb": end,
            "maxMb": max([end, *(s[1] for s in samples)]),
            "secondHalfGrowthMb": round(end - half[0][1], 1) if half else None,
            "secondHalfSlopeMbPerMin": slope_per_minute([(s[0], s[1]) for s in half]),
            "secondHalfAnonSlopeMbPerMin": slope_per_minute([(s[0], s[3]) for s in half]),
            "samples": [list(sample) for sample in samples]}  # [seconds, RSS, data dir, anonymous RSS] (MiB)


def slope_per_minute(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, MiB) points, in MiB per minute (None for fewer than 3 points)."""
    if len(points) < 3:
        return None
    mean_t = sum(t for t, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    return round(60 * sum((t - mean_t) * (y - mean_y) for t, y in points) / spread, 3) if spread else None


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
    parser.add_argument("--steady", action="store_true", help="writes keep the stored data the same size (soak)")
    parser.add_argument("--malloc-arenas", type=int, default=None, help="`agentkb serve --malloc-arenas` (0: glibc's)")
    args = parser.parse_args()
    serve_args = () if args.malloc_arenas is None else ("--malloc-arenas", str(args.malloc_arenas))
    result = run(args.seconds, args.clients, args.sample_every, args.steady, serve_args)
    print(json.dumps(result, separators=(",", ":")))
    return 0 if result["errors"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
