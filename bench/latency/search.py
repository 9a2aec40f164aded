"""Warm search latency through the search Lambda handler on an ingested BEIR corpus.

    python -m bench.latency.search --dataset bench/data/scifact [--mode hybrid] [--top-k 10] [--queries 300]
    python -m bench.latency.search --dataset bench/data/scifact --stages [--metrics] | tail -1   # where the time goes

Reuses the data dir bench.quality.scifact built (run it first: it ingests the corpus once). Every request is a full
API Gateway REST event through `search.handler.lambda_handler`: gate (auth, rate limit), validation, query
embedding, both retrieval legs, fusion and serialisation. Prints one JSON line. `--stages` adds the median and mean
ms of every stage (bench/latency/stages.py); `--metrics` turns Powertools metrics on, as on Lambda, so each request
also flushes its EMF line to stdout (hence `| tail -1`). Every query embeds (the query-vector cache is cleared).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from bench.beir import load_queries, percentile, require_dataset

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AGENTKB_RATE_LIMIT_PER_MINUTE", "1000000")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--mode", choices=["vector", "hybrid"], default="hybrid")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--stages", action="store_true", help="time every stage of the request path")
    parser.add_argument("--metrics", action="store_true", help="flush EMF metrics per request, as on Lambda")
    args = parser.parse_args()
    require_dataset(args.dataset)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "false" if args.metrics else "true")
    from agentkb.services.ingest.chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS

    name = f"{args.dataset.resolve().name}-{DEFAULT_CHUNK_TOKENS}-{DEFAULT_OVERLAP_TOKENS}"
    data_dir = args.data_dir or ROOT / "bench" / ".cache" / name
    if not (data_dir / "agentkb.sqlite3").exists():
        sys.exit(f"no ingested corpus in {data_dir}: run `python -m bench.quality.scifact --dataset {args.dataset}`"
                 " first")
    os.environ["AGENTKB_DATA_DIR"] = str(data_dir)

    from agentkb.composition import get_ports
    from agentkb.local.events import rest_event
    from agentkb.local.lambda_context import LocalLambdaContext
    from agentkb.services.access.api_keys import create_api_key
    from agentkb.services.search.service import QUERY_VECTORS
    from bench.latency.stages import StageClock, instrument
    from search.handler import lambda_handler

    c = get_ports()
    kb = c.catalog.find_knowledge_base_by_name("bench", name)
    key, _ = create_api_key(c.keys, c.secrets, ["bench"], ["api:read"], "latency-bench")
    texts = list(load_queries(args.dataset).values())
    chunks = c.index.db.connection().execute(  # type: ignore[attr-defined]  (the embedded engine's database)
        "SELECT COUNT(*) FROM chunks WHERE knowledge_base_id = ?", (kb.id,)).fetchone()
    clock = StageClock()
    if args.stages:
        instrument(clock, c)
    latencies = []
    for i in range(args.warmup + args.queries):
        body = {"workspaceId": "bench", "knowledgeBaseIds": [kb.id], "query": texts[i % len(texts)],
                "topK": args.top_k, "searchMode": args.mode}
        event = rest_event("POST", "/api/v2/knowledge/search", body, key=key)
        QUERY_VECTORS.clear()  # every request embeds its query, as a first-time query does
        t0 = time.perf_counter()
        response = clock.run(lambda e=event: lambda_handler(e, LocalLambdaContext()))
        elapsed = (time.perf_counter() - t0) * 1000
        assert response["statusCode"] == 200, response["body"]
        if i >= args.warmup:
            latencies.append(elapsed)
        else:
            clock.requests.clear()
    print(json.dumps({"bench": "search-latency", "mode": args.mode, "top_k": args.top_k, "chunks": chunks[0],
                      "queries": len(latencies), "p50_ms": round(percentile(latencies, 0.5), 2),
                      "p95_ms": round(percentile(latencies, 0.95), 2),
                      "p99_ms": round(percentile(latencies, 0.99), 2),
                      **({"stages": clock.summary()} if args.stages else {})}))


if __name__ == "__main__":
    main()
