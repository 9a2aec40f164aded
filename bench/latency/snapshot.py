"""Snapshot assembly latency: 3 sources x 20 candidates into a 16k-token budget on SciFact, one JSON line.

    POWERTOOLS_METRICS_DISABLED=true .venv/bin/python -m bench.latency.snapshot [--dataset DIR] [--docs 2000]
        [--queries 100]

The first run ingests the first --docs SciFact documents through the public ingest service (~20 docs/s of
embedding on two cores) into a persistent data dir under bench/.cache/ (gitignored); reruns find every document
unchanged and skip straight to timing. Memory and graph sources get a few hundred synthetic records.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from bench.beir import require_dataset

if TYPE_CHECKING:
    from agentkb.composition import Ports

ROOT = Path(__file__).resolve().parents[2]

CACHE = ROOT / "bench" / ".cache" / "snapshot"
WS = "bench"


def setup_env() -> None:
    os.environ["AGENTKB_DATA_DIR"] = str(CACHE)
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")


def ingest_corpus(ports: Ports, dataset: Path, docs: int) -> str:
    from agentkb.models.domain import Principal
    from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
    from agentkb.services.ingest import service as ingest

    deps = ingest.IngestDeps(ports.catalog, ports.index, ports.embedder,
                             ports.tokenizer, ports.embedding_cache)
    seed = Principal("bench", (WS,), ("api:write",))
    kb = ports.catalog.find_knowledge_base_by_name(WS, "scifact") or ingest.create_knowledge_base(
        CreateKnowledgeBaseRequest(workspaceId=WS, name="scifact"), seed, deps)
    started = time.perf_counter()
    with (dataset / "corpus.jsonl").open() as fh:
        for n, line in enumerate(fh):
            if n >= docs:
                break
            doc = json.loads(line)
            content = f"{doc['title']}\n\n{doc['text']}".strip()
            ingest.add_document(kb.id, AddDocumentRequest(workspaceId=WS, name=f"{doc['_id']}.txt", content=content),
                                seed, deps)
            if n % 200 == 199:
                print(f"ingested {n + 1} docs in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    return kb.id


def seed_memory_and_graph(ports: Ports, queries: list[str], count: int) -> None:
    from agentkb.composition import get_ports
    from agentkb.models.domain import Principal
    from agentkb.models.memory.api import MemoryWriteRequest
    from agentkb.services.graph.write import parse_graph_write, upsert_graph
    from agentkb.services.memory.service import MemoryDeps, write_memory

    principal = Principal("bench", (WS,), ("api:write",))
    deps = MemoryDeps(ports.memories, ports.graph, ports.embedder)
    for i in range(count):
        text = queries[i % len(queries)]
        write_memory(MemoryWriteRequest.model_validate({
            "workspace_id": WS, "visibility": "workspace", "type": "decision", "name": f"finding-{i}",
            "body": f"Finding {i}: the team noted that {text}", "confirmed": True}), principal, deps)
    proof = {"id": "p0", "provider": "bench", "artifact": "scifact/corpus.jsonl", "contentHash": "0" * 64,
             "observedAt": "2025-01-01T00:00:00Z", "derivation": "extracted", "trust": "observed",
             "confidence": "medium", "freshness": "fresh"}
    entities = [{"id": f"topic:{i}", "kind": "document", "label": " ".join(queries[i % len(queries)].split()[:6]),
                 "identity": {"key": f"topic-{i}", "scope": "workspace", "aliases": [], "fingerprint": "0" * 64},
                 "attributes": {"claim": queries[i % len(queries)]}, "proofIds": ["p0"]} for i in range(count)]
    relations = [{"id": f"r{i}", "from": f"topic:{i}", "to": f"topic:{(i * 7 + 1) % count}", "kind": "references",
                  "derivation": "inferred", "trust": "observed", "confidence": "medium", "proofIds": ["p0"]}
                 for i in range(count)]
    upsert_graph(get_ports().graph, parse_graph_write({"workspaceId": WS, "entities": entities, "relations": relations,
                                                   "proofs": [proof]}))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, default=ROOT / "bench" / "data" / "scifact",
                        help="a BEIR dataset folder (bench/README.md: where to get SciFact)")
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--synthetic", type=int, default=300, help="memories and graph entities")
    args = parser.parse_args()
    require_dataset(args.dataset)
    setup_env()
    from agentkb.api.routes.snapshot import snapshot_deps
    from agentkb.composition import get_ports
    from agentkb.models.domain import Principal
    from agentkb.models.snapshot import CreateSnapshotRequest
    from agentkb.services.snapshot.service import create_snapshot

    ports = get_ports()
    queries = [json.loads(line)["text"] for line in (args.dataset / "queries.jsonl").open()][: max(args.queries, 50)]
    t0 = time.perf_counter()
    kb_id = ingest_corpus(ports, args.dataset, args.docs)
    marker = CACHE / f"seeded-{args.synthetic}"
    if not marker.exists():
        seed_memory_and_graph(ports, queries, args.synthetic)
        marker.write_text("ok")
    setup_s = time.perf_counter() - t0
    principal = Principal("bench", (WS,), ("api:read", "api:write"))
    timings, items, used = [], [], []
    for i, query in enumerate(queries[: args.queries] * 2):
        request = CreateSnapshotRequest.model_validate({
            "runId": str(uuid.uuid4()), "attemptId": str(uuid.uuid4()),
            "scope": {"workspaceId": WS, "maxClassification": "confidential"},
            "budget": {"maxTokens": 16000, "reservedForOutput": 0}, "task": query,
            "sources": {"knowledge": {"knowledgeBaseIds": [kb_id], "topK": 20},
                        "memory": {"query": query, "maxItems": 20, "maxTokens": 20000},
                        "graph": {"query": " ".join(query.split()[:4]), "limit": 20}}})
        started = time.perf_counter()
        outcome = create_snapshot(request, principal, snapshot_deps(get_ports()))  # per request, as the route does
        elapsed = (time.perf_counter() - started) * 1000
        if i >= args.queries:  # the first pass warms the model, caches and SQLite pages
            doc = json.loads(outcome.body)
            timings.append(elapsed)
            items.append(len(doc["items"]))
            used.append(doc["budget"]["usedTokens"])
    timings.sort()
    print(json.dumps({
        "bench": "snapshot", "docs": args.docs, "synthetic": args.synthetic, "queries": len(timings),
        "p50_ms": round(statistics.median(timings), 1), "p95_ms": round(timings[int(0.95 * (len(timings) - 1))], 1),
        "mean_items": round(statistics.mean(items), 1), "mean_used_tokens": round(statistics.mean(used)),
        "setup_s": round(setup_s, 1), "target_p50_ms": 60}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
