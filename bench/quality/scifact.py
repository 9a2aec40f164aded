"""Retrieval quality on a BEIR dataset through the public ingest code and the search Lambda handler.

    python -m bench.quality.scifact --dataset bench/data/scifact --split train --mode hybrid [--json]

Ingests corpus.jsonl into a persistent bench data dir (bench/.cache/<dataset>-<chunk>-<overlap>/; vectors are
cached by content hash, so a second run embeds nothing), runs every query of the split through the search
handler and prints one JSON line: ndcg@10, recall@100, mrr@10, latency_ms_p50/p95, ingest_chunks_per_s.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AGENTKB_RATE_LIMIT_PER_MINUTE", "1000000")  # a benchmark, not a tenant

# Everything the run imports, here: a missing package fails at once, not after minutes of embedding. Only the search
# handler waits for the queries (importing it pauses the garbage collector: agentkb/coldstart_gc.py).
from agentkb.composition import get_ports, reset_ports  # noqa: E402
from agentkb.config import reset_settings  # noqa: E402
from agentkb.local.events import body_of, rest_event  # noqa: E402
from agentkb.local.lambda_context import LocalLambdaContext  # noqa: E402
from agentkb.local.operator import OPERATOR, create_kb, deps  # noqa: E402
from agentkb.models.domain import IndexQuery  # noqa: E402
from agentkb.models.ingest import AddDocumentRequest  # noqa: E402
from agentkb.services.access.api_keys import create_api_key  # noqa: E402
from agentkb.services.ingest.chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS  # noqa: E402
from agentkb.services.ingest.service import add_document, prefetch_embeddings  # noqa: E402
from agentkb.services.search.service import lexical_ranking  # noqa: E402
from bench.beir import (  # noqa: E402
    load_corpus,
    load_qrels,
    load_queries,
    mrr_at,
    ndcg_at,
    percentile,
    recall_at,
    require_dataset,
)

WORKSPACE = "bench"
BATCH_DOCS = 32


def setup(data_dir: Path, chunk_tokens: int, overlap: int) -> None:
    os.environ["AGENTKB_DATA_DIR"] = str(data_dir)
    reset_settings()
    reset_ports()


def ingest(dataset: Path, name: str, chunk_tokens: int, overlap: int, limit: int | None) -> dict[str, float | int]:
    """Ingest through the ingest service (the code behind POST .../documents); returns throughput stats."""
    c = get_ports()
    kb = c.catalog.find_knowledge_base_by_name(WORKSPACE, name) or create_kb(c, WORKSPACE, name, None, [])
    ingest_deps = replace(deps(c), chunk_tokens=chunk_tokens, overlap_tokens=overlap)
    corpus = load_corpus(dataset)[:limit]
    started, chunks, fresh = time.perf_counter(), 0, 0
    # Markdown with the title as its heading: the title becomes every chunk's context (services/ingest/chunking.py).
    contents = [f"# {doc['title']}\n\n{doc['text']}" if doc.get("title") else doc["text"] for doc in corpus]
    for i, doc in enumerate(corpus, start=1):
        if i % BATCH_DOCS == 1:  # embed the next group's chunks in full batches (vectors land in the cache)
            prefetch_embeddings(ingest_deps, kb, contents[i - 1:i - 1 + BATCH_DOCS])
        existing = c.catalog.find_document_by_name(kb.id, doc["_id"])
        content = contents[i - 1]
        result = add_document(kb.id, AddDocumentRequest(workspaceId=WORKSPACE, name=doc["_id"], content=content),
                              OPERATOR, ingest_deps)
        chunks += result.chunk_count
        if existing is None or existing.content_hash != result.content_hash:
            fresh += result.chunk_count
        if i % 500 == 0:
            rate = fresh / max(1e-9, time.perf_counter() - started)
            print(f"  ingested {i}/{len(corpus)} docs ({fresh} new chunks, {rate:.1f} chunks/s)", file=sys.stderr)
    elapsed = time.perf_counter() - started
    return {"kb_id": kb.id, "documents": len(corpus), "chunks": chunks, "new_chunks": fresh, "seconds": elapsed}


def run_queries(kb_id: str, dataset: Path, split: str, mode: str, top_k: int) -> dict[str, float]:
    from search.handler import lambda_handler  # functions/search/handler.py

    c = get_ports()
    key, _ = create_api_key(c.keys, c.secrets, [WORKSPACE], ["api:read"], "bench")
    queries, qrels = load_queries(dataset), load_qrels(dataset, split)
    latencies, ndcg, recall, mrr = [], [], [], []
    mode_body = {"searchMode": mode} if mode != "lexical" else {}
    lexical = mode == "lexical"
    for qid, relevant in qrels.items():
        body = {"workspaceId": WORKSPACE, "knowledgeBaseIds": [kb_id], "query": queries[qid], "topK": top_k,
                **mode_body}
        event = rest_event("POST", "/api/v2/knowledge/search", body, key=key)
        t0 = time.perf_counter()
        if lexical:
            ranked_chunks = _lexical(c, kb_id, queries[qid], top_k)
        else:
            response = lambda_handler(event, LocalLambdaContext())
            assert response["statusCode"] == 200, response["body"]
            ranked_chunks = [r["documentName"] for r in body_of(response)["data"]["results"]]
        latencies.append((time.perf_counter() - t0) * 1000)
        ranked = list(dict.fromkeys(ranked_chunks))  # chunk -> document, first (best) occurrence wins
        ndcg.append(ndcg_at(ranked, relevant, 10))
        recall.append(recall_at(ranked, relevant, 100))
        mrr.append(mrr_at(ranked, relevant, 10))
    n = len(ndcg)
    return {"queries": n, "ndcg@10": round(sum(ndcg) / n, 4), "recall@100": round(sum(recall) / n, 4),
            "mrr@10": round(sum(mrr) / n, 4), "latency_ms_p50": round(percentile(latencies, 0.5), 2),
            "latency_ms_p95": round(percentile(latencies, 0.95), 2)}


def _lexical(c: object, kb_id: str, query: str, top_k: int) -> list[str]:
    """The lexical leg alone, as the search service ranks it (the public API has no lexical-only mode)."""
    hits = lexical_ranking(c.index, IndexQuery(WORKSPACE, (kb_id,), text=query, limit_per_kb=top_k))  # type: ignore[attr-defined]
    names = _names(c, kb_id)
    return [names[h.document_id] for h in hits[:top_k] if h.document_id in names]


_NAMES: dict[str, dict[str, str]] = {}


def _names(c: object, kb_id: str) -> dict[str, str]:
    """Document id -> name (the BEIR doc id), read once: hydration is not what this mode measures."""
    if kb_id not in _NAMES:
        rows = c.index.db.connection().execute(  # type: ignore[attr-defined]
            "SELECT id, name FROM documents WHERE knowledge_base_id = ?", (kb_id,))
        _NAMES[kb_id] = dict(rows.fetchall())
    return _NAMES[kb_id]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--split", default="train")
    parser.add_argument("--mode", choices=["lexical", "vector", "hybrid"], default="hybrid")
    parser.add_argument("--chunk-tokens", type=int, default=None)
    parser.add_argument("--overlap", type=int, default=None)
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--limit-docs", type=int, default=None)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print only the JSON line")
    args = parser.parse_args()
    require_dataset(args.dataset, args.split)
    size = args.chunk_tokens or DEFAULT_CHUNK_TOKENS
    overlap = DEFAULT_OVERLAP_TOKENS if args.overlap is None else args.overlap
    name = f"{args.dataset.resolve().name}-{size}-{overlap}"
    data_dir = args.data_dir or ROOT / "bench" / ".cache" / name
    setup(data_dir, size, overlap)
    stats_path = data_dir / "ingest-stats.json"
    stats = ingest(args.dataset, name, size, overlap, args.limit_docs)
    if stats["new_chunks"]:
        stats["chunks_per_s"] = round(stats["new_chunks"] / stats["seconds"], 1)
        stats_path.write_text(json.dumps(stats))
    elif stats_path.exists():
        stats = {**stats, "chunks_per_s": json.loads(stats_path.read_text()).get("chunks_per_s")}
    result = run_queries(str(stats["kb_id"]), args.dataset, args.split, args.mode, args.top_k)
    line = {"dataset": args.dataset.resolve().name, "split": args.split, "mode": args.mode, "chunk_tokens": size,
            "overlap": overlap, **result, "ingest_chunks_per_s": stats.get("chunks_per_s"),
            "corpus_chunks": stats["chunks"]}
    print(json.dumps(line))


if __name__ == "__main__":
    main()
