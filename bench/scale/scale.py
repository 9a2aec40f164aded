"""The embedded engine at scale: an N-chunk KB near SciFact's vectors, searched through the handler beside the real
~17k-chunk SciFact KB and LanceDB on the same data, in one run.

    python -m bench.scale.scale --dataset bench/data/scifact --chunks 1000000 --cache /tmp/scale --json

SciFact is ingested (embedded) once into --cache (default: a fresh temp dir, so a run without it embeds ~17k chunks);
the N-chunk KB is written there through the bulk path (bench/scale/data.py) and LanceDB's copy beside it, reused by
later runs with the same --chunks (their build numbers are the ones measured when built). Then, interleaved per
query (real SciFact claims): hybrid and vector search through the handler at N and at ~17k, LanceDB hybrid and
vector at N; the vector leg's recall@10 at N against exact search over the same vectors; hybrid searches right
after a one-chunk document write (through the ingest service) against steady ones, at N and at ~17k. RSS is read
before LanceDB is opened (agentkb alone). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AGENTKB_RATE_LIMIT_PER_MINUTE", "1000000")
os.environ.setdefault("LANCE_LOG", "error")

import numpy as np  # noqa: E402

from bench.beir import load_qrels, load_queries, percentile, require_dataset  # noqa: E402
from bench.scale.kbs import WORKSPACE, big_kb, small_kb  # noqa: E402

TOP_K = 10
EXACT_POOL = 200  # candidates of the exact recall reference re-scored in float32 (float16 picks them)


def args_of() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--chunks", type=int, required=True)
    parser.add_argument("--cache", type=Path, default=None, help="keep SciFact's embedding and the built KBs here")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=40, help="one-chunk writes per KB for the write stall")
    parser.add_argument("--noise", type=float, default=0.015, help="std of the noise added per dimension")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit-docs", type=int, default=None, help="ingest only the first N SciFact abstracts")
    parser.add_argument("--no-lancedb", action="store_true")
    parser.add_argument("--ndcg", action="store_true",
                        help="also SciFact train hybrid nDCG@10 on the ~17k KB, exact scan and approximate index")
    parser.add_argument("--json", action="store_true", help="print only the JSON object")
    return parser.parse_args()


def main() -> None:
    args = args_of()
    require_dataset(args.dataset, "train")
    cache = args.cache or Path(tempfile.mkdtemp(prefix="agentkb-scale-"))
    from agentkb.services.ingest.chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS
    from bench.quality import scifact

    scifact.setup(cache / "agentkb", DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS)
    name = f"{args.dataset.resolve().name}-{DEFAULT_CHUNK_TOKENS}-{DEFAULT_OVERLAP_TOKENS}"
    small = small_kb(args, name)
    out: dict[str, Any] = {"bench": "scale", "chunks": args.chunks, "noise": args.noise}
    big, build = big_kb(cache, small, args)
    out.update(build)
    run = Runner(args)
    t0 = time.perf_counter()
    run.handler(run.query_texts[0], big, "hybrid")  # a fresh process: load the table (and index) of the big KB
    out["first_search_s"] = round(time.perf_counter() - t0, 2)
    if "build_s" not in out:
        out["build_s"] = round(out["write_s"] + out["first_search_s"], 2)
    for text in run.query_texts[:5]:
        for kb in (big, small):
            run.handler(text, kb, "hybrid")
            run.handler(text, kb, "vector")
    out["recall_at_10"] = run.recall(big)
    out["rss_mb"] = _rss_mb()
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    lance = None if args.no_lancedb else run.lancedb(cache, big, out)
    out.update(run.interleaved(big, small, lance))
    for label, kb in (("", big), ("small_", small)):
        out[f"{label}write_stall_ratio"] = run.write_stall(kb, label, out)
    out["rss_mb_end"] = _rss_mb()
    if args.ndcg:
        out.update(_ndcg(args.dataset, small))
    if out["small_hybrid_p50_ms"]:
        out["hybrid_p50_vs_small"] = round(out["hybrid_p50_ms"] / out["small_hybrid_p50_ms"], 2)
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))


def _ndcg(dataset: Path, small: str) -> dict[str, float]:
    """SciFact hybrid nDCG@10 (train) on the real KB as it is (exact scan: below the threshold) and with the
    approximate index forced on it (the threshold lowered in this process only)."""
    from agentkb.adapters.embedded.vectors import chunk_table
    from agentkb.composition import get_ports
    from bench.quality.scifact import run_queries

    tables, threshold = get_ports().index.tables, chunk_table.THRESHOLD
    out = {"ndcg_at_10_exact": run_queries(small, dataset, "train", "hybrid", 100)["ndcg@10"]}
    tables.forget(small)
    chunk_table.THRESHOLD = 1
    try:
        out["ndcg_at_10_ann"] = run_queries(small, dataset, "train", "hybrid", 100)["ndcg@10"]
        out["ndcg_ann_used"] = tables.get(get_ports().index.db.connection(), small).ann is not None
    finally:
        chunk_table.THRESHOLD = threshold
        tables.forget(small)
    return out


def _rss_mb() -> int:
    """This process's resident set now, MiB (Linux /proc; no dependency)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024)
    return -1


class Runner:
    """The handler, the embedder and the measurements of one run."""

    def __init__(self, args: argparse.Namespace) -> None:
        from agentkb.composition import get_ports
        from agentkb.services.access.api_keys import create_api_key

        self.args = args
        self.c = get_ports()
        self.key, _ = create_api_key(self.c.keys, self.c.secrets, [WORKSPACE], ["api:read"], "scale-bench")
        qrels, texts = load_qrels(args.dataset, "train"), load_queries(args.dataset)
        self.query_texts = [texts[q] for q in list(qrels)[:args.queries]]
        self.vectors = [np.asarray(self.c.embedder.embed_query(t), np.float32) for t in self.query_texts]

    def handler(self, query: str, kb_id: str, mode: str) -> list[str]:
        from agentkb.local.events import body_of, rest_event
        from agentkb.local.lambda_context import LocalLambdaContext
        from agentkb.services.search.service import QUERY_VECTORS
        from search.handler import lambda_handler

        QUERY_VECTORS.clear()  # every search embeds its query, as a new query does
        body = {"workspaceId": WORKSPACE, "knowledgeBaseIds": [kb_id], "query": query, "topK": TOP_K,
                "searchMode": mode}
        response = lambda_handler(rest_event("POST", "/api/v2/knowledge/search", body, key=self.key),
                                  LocalLambdaContext())
        assert response["statusCode"] == 200, response["body"]
        return [f"{r['documentId']}:{r['chunkIndex']}" for r in body_of(response)["data"]["results"]]

    def recall(self, kb_id: str) -> float:
        """The vector leg's recall@10 against exact float32 cosine over the same vectors: every row scored from the
        table (float16 for an indexed KB, a block at a time), its best EXACT_POOL re-scored from SQLite's float32."""
        from agentkb.adapters.embedded.vectors import rescore
        from agentkb.models.domain import IndexQuery

        conn = self.c.index.db.connection()
        table = self.c.index.tables.get(conn, kb_id)
        scores = []
        for q in self.vectors:
            got = {h.chunk_id for h in self.c.index.vector_search(IndexQuery(WORKSPACE, (kb_id,), vector=q.tolist(),
                                                                             limit_per_kb=TOP_K))}
            sims = np.where(table.has_vector, rescore.scores(table.vectors, q), -np.inf)
            pool = np.argpartition(-sims, EXACT_POOL)[:EXACT_POOL]
            exact_sims = rescore.reader(conn, len(q))(table.rowids[pool]) @ q
            exact = {table.chunk_ids[i] for i in pool[np.argsort(-exact_sims)[:TOP_K]].tolist()}
            scores.append(len(got & exact) / TOP_K)
        return round(float(np.mean(scores)), 4)

    def lancedb(self, cache: Path, kb_id: str, out: dict[str, Any]) -> Any:
        from bench.scale.lance import open_lancedb, searches

        table = self.c.index.tables.get(self.c.index.db.connection(), kb_id)
        lance, stats = open_lancedb(cache / f"lancedb-{self.args.chunks}-{self.args.noise}-{self.args.seed}",
                                    self.c.index.db.connection(), kb_id, table.vectors.shape[1])
        out.update(stats)
        return searches(lance, TOP_K)

    def interleaved(self, big: str, small: str, lance: Any) -> dict[str, float]:
        rows: dict[str, list[float]] = {}

        def timed(row: str, call: Callable[[], object]) -> None:
            t0 = time.perf_counter()
            call()
            rows.setdefault(row, []).append((time.perf_counter() - t0) * 1000)

        for text in self.query_texts:
            timed("hybrid", lambda t=text: self.handler(t, big, "hybrid"))
            timed("vector", lambda t=text: self.handler(t, big, "vector"))
            timed("small_hybrid", lambda t=text: self.handler(t, small, "hybrid"))
            timed("small_vector", lambda t=text: self.handler(t, small, "vector"))
            if lance is not None:  # with the same embedding: agentkb's rows embed their query too
                timed("lancedb_hybrid", lambda t=text: lance[0](t, self._embed(t)))
                timed("lancedb_vector", lambda t=text: lance[1](self._embed(t)))
        out = {}
        for row, values in rows.items():
            out[f"{row}_p50_ms"] = round(percentile(values, 0.5), 2)
            out[f"{row}_p99_ms"] = round(percentile(values, 0.99), 2)
        return out

    def _embed(self, text: str) -> np.ndarray:
        return np.asarray(self.c.embedder.embed_query(text), np.float32)

    def write_stall(self, kb_id: str, label: str, out: dict[str, Any]) -> float:
        """p50 of hybrid searches sent right after a one-chunk document write / p50 of the same searches without."""
        from agentkb.local.operator import OPERATOR, deps
        from agentkb.models.ingest import AddDocumentRequest
        from agentkb.services.ingest.service import add_document

        steady, after, written = [], [], []
        for i in range(self.args.writes):
            text = self.query_texts[i % len(self.query_texts)]
            t0 = time.perf_counter()
            self.handler(text, kb_id, "hybrid")
            steady.append((time.perf_counter() - t0) * 1000)
            result = add_document(kb_id, AddDocumentRequest(workspaceId=WORKSPACE, name=f"scale-write-{i}",
                                                            content=f"A note written while agents search: {text}"),
                                  OPERATOR, deps(self.c))
            written.append(result.id)
            t0 = time.perf_counter()
            self.handler(text, kb_id, "hybrid")
            after.append((time.perf_counter() - t0) * 1000)
        kb = self.c.catalog.get_knowledge_base(WORKSPACE, kb_id)
        for doc_id in written:  # leave the KBs as they were (SciFact's nDCG is measured on the same KB)
            self.c.index.delete_document(kb, doc_id)
        out[f"{label}steady_hybrid_p50_ms"] = round(percentile(steady, 0.5), 2)
        out[f"{label}after_write_hybrid_p50_ms"] = round(percentile(after, 0.5), 2)
        return round(percentile(after, 0.5) / percentile(steady, 0.5), 3)


if __name__ == "__main__":
    main()
