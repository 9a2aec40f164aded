"""Recall latency through the recall handler at 10k and 100k memories, with and without the graph leg.

    .venv/bin/python -m bench.latency.recall [--sizes 10000 100000] [--queries 100]

Memories are synthetic: random unit vectors written straight through the memory store's batch insert (no model
call per memory), each linked to two of N/20 topic entities joined by weighted relations. Queries go through
`functions/recall/handler.py` with an API key, so auth, rate limiting, validation, the real query embedding
(local ONNX model), eligibility SQL, exact cosine, BFS and the token budget are all timed. One JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from typing import Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AGENTKB_LOG_LEVEL", "ERROR")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")
os.environ["AGENTKB_RATE_LIMIT_PER_MINUTE"] = "1000000"
# One BLAS thread, like a 1-2 vCPU Lambda: threaded matvecs thrash on a shared small machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

WORDS = [
    "deploy", "billing", "invoice", "refund", "queue", "retry", "timeout", "cache", "schema", "migration", "incident",
    "rollback", "alert", "customer", "churn", "onboarding", "release", "review", "latency", "budget", "token",
    "ledger", "payments", "search", "index"]
VISIBILITIES = ("workspace", "workspace", "workspace", "organization", "project", "channel", "personal")


def build(size: int, dim: int, seed: int = 7) -> tuple[str, Any]:
    """A fresh data dir holding `size` memories in workspace `bench`; returns (api key, ports)."""
    from agentkb.composition import get_ports, reset_ports
    from agentkb.config import reset_settings
    from agentkb.models.graph.records import GraphBatch, RelationRecord
    from agentkb.models.memory.api import MemoryRecord
    from agentkb.services.access.api_keys import create_api_key
    from agentkb.services.memory.graph_links import recall_entity_id

    os.environ["AGENTKB_DATA_DIR"] = tempfile.mkdtemp(prefix=f"agentkb-recall-{size}-")
    reset_settings()
    reset_ports()
    ports = get_ports()
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    topics = [recall_entity_id("topic", f"topic-{i}") for i in range(max(10, size // 20))]
    relations = tuple(RelationRecord(id=f"rel-{i}", from_id=rng.choice(topics), to_id=rng.choice(topics),
                                     kind="related-to", weight=round(rng.uniform(0.1, 1.0), 2))
                      for i in range(len(topics) * 3))
    from agentkb.composition import get_ports

    get_ports().graph.upsert("bench", GraphBatch(relations=relations))  # topics live in recall's own entity space
    now = time.time()
    for start in range(0, size, 5000):
        n = min(5000, size - start)
        vectors = nrng.standard_normal((n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        records = []
        for j in range(n):
            i = start + j
            vis = VISIBILITIES[i % len(VISIBILITIES)]
            records.append(MemoryRecord(
                workspace_id="bench", project_id=f"p{i % 5}", visibility=vis, owner_id=f"u{i % 3}",
                channel_id=f"c{i % 4}", type="note", name=f"memory-{i}", description=" ".join(rng.sample(WORDS, 4)),
                body=" ".join(rng.choices(WORDS, k=30)), confirmed=i % 10 != 0, stale=i % 17 == 0, valid_until=None,
                sensitivity=1 if i % 13 == 0 else 0, source=None, request_hash=str(i),
                created_at="2027-01-01T00:00:00Z",
                updated_at=now - rng.uniform(0, 90) * 86_400, embedding=vectors[j].tolist(),
                entity_ids=tuple({rng.choice(topics) for _ in range(2)})))
        ports.memories.insert_many(records)
    key, _ = create_api_key(ports.keys, ports.secrets, ["bench"], ["api:read"], "u0")
    return key, ports


def request(rng: random.Random, graph: bool) -> dict[str, Any]:
    return {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": "bench", "project_id": "p1",
            "task_type": "general", "query": " ".join(rng.sample(WORDS, 5)),
            "entities": {"topics": [f"topic-{rng.randrange(100)}"]} if graph else {},
            "channel": {"kind": "slack", "id": "c1"},
            "scope": {"visibility": "personal", "project_only": False, "include_unconfirmed": False,
                      "include_stale": False},
            "limits": {"max_items": 10, "max_tokens": 4000, "recency_days": 60},
            "sensitivity": {"contains_code": False, "contains_customer_data": False,
                            "contains_private_meeting_data": False}}


def measure(key: str, queries: int, graph: bool) -> dict[str, Any]:
    import agentkb.services.recall.service as recall_service
    from agentkb.local.events import rest_event
    from agentkb.local.lambda_context import LocalLambdaContext
    from recall.handler import lambda_handler

    original = recall_service.graph_matches
    if not graph:  # the vector leg alone: the graph leg answers nothing without touching the graph
        recall_service.graph_matches = lambda *args, **kwargs: []  # type: ignore[assignment]
    rng = random.Random(11)
    times, graph_hits, results = [], 0, 0
    try:
        for i in range(queries + 5):
            event = rest_event("POST", "/v1/recall", request(rng, graph), key=key)
            started = time.perf_counter()
            response = lambda_handler(event, LocalLambdaContext())
            elapsed = (time.perf_counter() - started) * 1000
            assert response["statusCode"] == 200, response["body"]
            body = json.loads(response["body"])
            if i >= 5:  # the first few warm the caches (vector matrix, model session)
                times.append(elapsed)
                graph_hits += len(body["graph_matches"])
                results += len(body["results"])
    finally:
        recall_service.graph_matches = original
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(len(times) * 0.95) - 1], 2),
            "mean_results": round(results / len(times), 2), "mean_graph_matches": round(graph_hits / len(times), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    from agentkb.adapters.embedded.embedder import DIMENSION

    out: dict[str, Any] = {"bench": "recall", "queries": args.queries, "dimension": DIMENSION, "sizes": {}}
    for size in args.sizes:
        started = time.perf_counter()
        key, _ = build(size, DIMENSION)
        load_s = round(time.perf_counter() - started, 1)
        out["sizes"][str(size)] = {"load_s": load_s, "with_graph": measure(key, args.queries, True),
                                   "without_graph": measure(key, args.queries, False)}
    print(json.dumps(out, separators=(",", ":")))


if __name__ == "__main__":
    main()
