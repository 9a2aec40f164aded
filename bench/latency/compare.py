"""Side by side, interleaved per query: agentkb hybrid through the handler, its own floor, LanceDB hybrid with the
same embeddings, the FTS5 / tantivy / bm25s lexical legs on the same chunks, the query embedding, numpy dot.

    pip install -e '.[local,bench]'
    python -m bench.latency.compare --dataset bench/data/scifact [--queries 300] [--rounds 1]
    python -m bench.latency.compare --dataset bench/data/scifact --lexical-only --queries 809   # the lexical legs only
    python -m bench.latency.compare --dataset bench/data/scifact --stages   # + the handler's stages (stages.py)

Reuses the corpus bench.quality.scifact ingested (run it first). Peers are built once per data dir into
bench/.cache/<name>/compare/<n>-chunks/ from the very chunks (and vectors) agentkb holds. Every query runs once per
engine per round, engines in turn, so machine load hits them alike: read the ratios. Prints one JSON line with
p50 ms and nDCG@10 per row, and the ratios the issue's targets are stated in.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("AGENTKB_RATE_LIMIT_PER_MINUTE", "1000000")
os.environ.setdefault("LANCE_LOG", "error")  # LanceDB's deprecation warnings, once per query

import numpy as np  # noqa: E402

from bench.beir import load_qrels, load_queries, ndcg_at, require_dataset  # noqa: E402

LEXICAL_K, VECTOR_K, TOP_K = 200, 50, 10


class Corpus:
    """The ingested chunks: ids, texts (context + content, as the lexical legs index them), vectors."""

    def __init__(self, conn: sqlite3.Connection, kb_id: str) -> None:
        rows = conn.execute("SELECT c.rowid, d.name, c.context, c.content, c.embedding FROM chunks c JOIN documents d"
                            " ON d.id = c.document_id WHERE c.knowledge_base_id = ? ORDER BY c.rowid",
                            (kb_id,)).fetchall()
        self.rowids = [r[0] for r in rows]
        self.names = [r[1] for r in rows]
        self.texts = [f"{r[2]}\n{r[3]}" if r[2] else r[3] for r in rows]
        self.vectors = np.stack([np.frombuffer(r[4], dtype=np.float32) for r in rows]) if rows and rows[0][4] \
            else np.zeros((len(rows), 0), np.float32)
        self.name_of = dict(zip(self.rowids, self.names, strict=True))


def fts5(corpus: Corpus, path: Path) -> Callable[[str], list[str]]:
    from agentkb.adapters.embedded.index import fts_query

    fresh = not path.exists()
    conn = sqlite3.connect(path, check_same_thread=False)
    if fresh:
        conn.execute("CREATE VIRTUAL TABLE fts USING fts5(content, tokenize='porter unicode61')")
        conn.executemany("INSERT INTO fts(rowid, content) VALUES (?, ?)", zip(corpus.rowids, corpus.texts, strict=True))
        conn.commit()

    def run(query: str) -> list[str]:
        match = fts_query(query)
        rows = conn.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?",
                            (match, LEXICAL_K)).fetchall() if match else []
        return [corpus.name_of[r[0]] for r in rows]

    return run


def bm25s_leg(corpus: Corpus) -> Callable[[str], list[str]]:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(corpus.texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)

    def run(query: str) -> list[str]:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        docs, _ = retriever.retrieve(tokens, k=min(LEXICAL_K, len(corpus.texts)), show_progress=False, n_threads=1)
        return [corpus.names[i] for i in docs[0]]

    return run


def lancedb_hybrid(corpus: Corpus, path: Path) -> Callable[[str, np.ndarray], list[str]]:
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(path))
    if "chunks" not in db.table_names():
        table = db.create_table("chunks", pa.table({
            "name": corpus.names, "text": corpus.texts,
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(corpus.vectors.ravel()), corpus.vectors.shape[1])}))
        table.create_fts_index("text", use_tantivy=False)
    table = db.open_table("chunks")

    def run(query: str, vector: np.ndarray) -> list[str]:
        found = (table.search(query_type="hybrid").vector(vector.tolist()).text(query).limit(TOP_K)
                 .select(["name"]).to_list())
        return [r["name"] for r in found]

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--stages", action="store_true", help="also time every stage of the handler's requests")
    parser.add_argument("--lexical-only", action="store_true",
                        help="chunk the corpus without embedding it and compare the lexical legs only")
    args = parser.parse_args()
    require_dataset(args.dataset, "train")
    if args.lexical_only:
        from bench.latency.compare_lexical import compare_lexical

        print(json.dumps(compare_lexical(args.dataset, args.queries, args.rounds)))
        return
    from agentkb.services.ingest.chunking import DEFAULT_CHUNK_TOKENS, DEFAULT_OVERLAP_TOKENS

    name = f"{args.dataset.resolve().name}-{DEFAULT_CHUNK_TOKENS}-{DEFAULT_OVERLAP_TOKENS}"
    data_dir = args.data_dir or ROOT / "bench" / ".cache" / name
    if not (data_dir / "agentkb.sqlite3").exists():
        sys.exit(f"no ingested corpus in {data_dir}: run `python -m bench.quality.scifact --dataset {args.dataset}`"
                 " first")
    os.environ["AGENTKB_DATA_DIR"] = str(data_dir)
    rows, ndcg, stages = run(args, data_dir, name)
    floor, handler = rows["floor: embed + lexical legs + dot, in parallel"], rows["agentkb hybrid, through the handler"]
    print(json.dumps({"bench": "compare", "queries": args.queries, "rounds": args.rounds,
                      "p50_ms": {k: round(statistics.median(v), 2) for k, v in rows.items()},
                      "ndcg@10": {k: round(v, 4) for k, v in ndcg.items()},
                      "ratios": {"handler / floor": round(statistics.median(handler) / statistics.median(floor), 2),
                                 "handler / lancedb hybrid": round(statistics.median(handler) / statistics.median(
                                     rows["lancedb hybrid + the same embedding"]), 2),
                                 "fts5 / tantivy": round(statistics.median(rows["fts5 top-200"]) / statistics.median(
                                     rows["tantivy top-200 (agentkb's leg)"]), 1)},
                      **({"handler stages": stages} if args.stages else {})}))


def run(args: argparse.Namespace, data_dir: Path,
        name: str) -> tuple[dict[str, list[float]], dict[str, float], dict[str, dict[str, float]]]:
    from agentkb.composition import get_ports
    from agentkb.local.events import body_of, rest_event
    from agentkb.local.lambda_context import LocalLambdaContext
    from agentkb.services.access.api_keys import create_api_key
    from agentkb.services.search.service import QUERY_VECTORS
    from bench.latency.stages import StageClock, instrument
    from search.handler import lambda_handler

    c = get_ports()
    kb = c.catalog.find_knowledge_base_by_name("bench", name)
    key, _ = create_api_key(c.keys, c.secrets, ["bench"], ["api:read"], "compare-bench")
    corpus = Corpus(c.index.db.connection(), kb.id)
    peers = data_dir / "compare" / f"{len(corpus.rowids)}-chunks"  # rebuilt whenever the corpus changes
    peers.mkdir(parents=True, exist_ok=True)
    legs = {"fts5 top-200": fts5(corpus, peers / "fts5.sqlite3"), "bm25s top-200": bm25s_leg(corpus),
            "tantivy top-200 (agentkb's leg)": lambda q: [corpus.name_of.get(r, "") for r, _ in
                                                          c.index.lexical.search_chunks(kb.id, q, LEXICAL_K)]}
    lance = lancedb_hybrid(corpus, peers / "lancedb")
    pool = ThreadPoolExecutor(max_workers=2)

    def floor(query: str) -> None:  # the legs agentkb needs, nothing else: embed || lexical, then dot
        lexical = pool.submit(lambda: (c.index.lexical.search_chunks(kb.id, query, LEXICAL_K),
                                       c.index.lexical.search_documents(kb.id, query, 100)))
        vector = np.asarray(c.embedder.embed_query(query), dtype=np.float32)
        sims = corpus.vectors @ vector
        np.argpartition(-sims, VECTOR_K)[:VECTOR_K]
        lexical.result()

    qrels = load_qrels(args.dataset, "train")
    texts = load_queries(args.dataset)
    chosen = list(qrels)[:args.queries]
    rows: dict[str, list[float]] = {}
    ranked: dict[str, dict[str, list[str]]] = {}

    def timed(row: str, qid: str, call: Callable[[], list[str] | None]) -> None:
        t0 = time.perf_counter()
        answer = call()
        rows.setdefault(row, []).append((time.perf_counter() - t0) * 1000)
        if answer is not None:
            ranked.setdefault(row, {})[qid] = list(dict.fromkeys(answer))

    clock = StageClock()

    def handler(query: str) -> list[str]:
        QUERY_VECTORS.clear()  # every row embeds the query: no row gets it from a cache
        body = {"workspaceId": "bench", "knowledgeBaseIds": [kb.id], "query": query, "topK": TOP_K}
        event = rest_event("POST", "/api/v2/knowledge/search", body, key=key)
        response = clock.run(lambda: lambda_handler(event, LocalLambdaContext()))
        return [r["documentName"] for r in body_of(response)["data"]["results"]]

    if args.stages:
        instrument(clock, c)
    for qid in chosen[:5]:  # warm every engine (model session, caches, indexes) before measuring
        handler(texts[qid])
        floor(texts[qid])
    clock.requests.clear()
    for _ in range(args.rounds):
        for qid in chosen:
            query = texts[qid]
            timed("agentkb hybrid, through the handler", qid, lambda q=query: handler(q))
            timed("floor: embed + lexical legs + dot, in parallel", qid, lambda q=query: floor(q))
            vector = np.asarray(c.embedder.embed_query(query), dtype=np.float32)
            timed("lancedb hybrid + the same embedding", qid,
                  lambda q=query, v=vector: lance(q, np.asarray(c.embedder.embed_query(q), dtype=np.float32)))
            for row, leg in legs.items():
                timed(row, qid, lambda q=query, leg=leg: leg(q))
            timed("query embedding (MiniLM int8)", qid, lambda q=query: (c.embedder.embed_query(q), None)[1])
            timed("numpy dot over the chunk matrix", qid, lambda v=vector: (corpus.vectors @ v, None)[1])
    ndcg = {row: sum(ndcg_at(ranked[row][q], qrels[q], 10) for q in chosen) / len(chosen) for row in ranked}
    return rows, ndcg, clock.summary()


if __name__ == "__main__":
    main()
