"""The lexical legs side by side on agentkb's chunks, without embedding anything (bench.latency.compare --lexical-only).

The corpus is chunked by the ingest's own chunker (markdown, title as every chunk's context) into an embedded
database without vectors, bench/.cache/<dataset>-lexical/; the legs then run interleaved per query.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.beir import load_corpus, load_qrels, load_queries, ndcg_at, recall_at

ROOT = Path(__file__).resolve().parents[2]


def chunk_only_index(dataset: Path) -> Any:
    from agentkb.adapters.embedded.embedder import local_tokenizer
    from agentkb.adapters.embedded.index import SqliteIndex
    from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
    from agentkb.adapters.embedded.sqlite.db import Database
    from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase
    from agentkb.services.ingest.chunking import chunk_markdown

    path = ROOT / "bench" / ".cache" / f"{dataset.resolve().name}-lexical" / "agentkb.sqlite3"
    fresh = not path.exists()
    db = Database(path)
    index = SqliteIndex(db)
    if fresh:
        kb = KnowledgeBase("kb", "bench", "lexical", None, EmbeddingProfile("none", 384), (), "")
        SqliteCatalog(db).create_knowledge_base(kb)
        tokenizer = local_tokenizer()
        for doc in load_corpus(dataset):
            text = f"# {doc['title']}\n\n{doc['text']}" if doc.get("title") else doc["text"]
            pieces = chunk_markdown(text, tokenizer)
            document = Document(doc["_id"], "kb", "bench", doc["_id"], None, "", {}, len(pieces), 0, "")
            chunks = [Chunk(f"{doc['_id']}:{p.index}", doc["_id"], p.index, p.content, p.token_count, p.content_hash,
                            None, context=p.context) for p in pieces]
            index.write_document(kb, document, chunks)
    index.lexical.refresh("kb")
    return index


def compare_lexical(dataset: Path, queries: int, rounds: int) -> dict[str, Any]:
    from agentkb.models.domain import IndexQuery
    from agentkb.services.search.service import lexical_ranking
    from bench.latency.compare import LEXICAL_K, Corpus, bm25s_leg, fts5

    index = chunk_only_index(dataset)
    corpus = Corpus(index.db.connection(), "kb")
    legs: dict[str, Callable[[str], list[str]]] = {
        "fts5 top-200": fts5(corpus, index.db.path.parent / "fts5.sqlite3"),
        "bm25s top-200": bm25s_leg(corpus),
        "tantivy top-200": lambda q: [corpus.name_of[r] for r, _ in index.lexical.search_chunks("kb", q,
                                                                                                 LEXICAL_K)],
        "agentkb lexical leg (chunks + documents, fused)": lambda q: [
            h.document_id for h in lexical_ranking(index, IndexQuery("bench", ("kb",), text=q, limit_per_kb=100))],
    }
    qrels, texts = load_qrels(dataset, "train"), load_queries(dataset)
    chosen = list(qrels)[:queries]
    times: dict[str, list[float]] = {row: [] for row in legs}
    ranked: dict[str, dict[str, list[str]]] = {row: {} for row in legs}
    for _ in range(rounds):
        for qid in chosen:
            for row, leg in legs.items():
                t0 = time.perf_counter()
                answer = leg(texts[qid])
                times[row].append((time.perf_counter() - t0) * 1000)
                ranked[row][qid] = list(dict.fromkeys(answer))
    p50 = {row: statistics.median(v) for row, v in times.items()}
    return {"bench": "compare-lexical", "chunks": len(corpus.rowids), "queries": len(chosen), "rounds": rounds,
            "p50_ms": {row: round(v, 3) for row, v in p50.items()},
            "ndcg@10": {row: round(sum(ndcg_at(r[q], qrels[q], 10) for q in chosen) / len(chosen), 4)
                        for row, r in ranked.items()},
            "recall@100": {row: round(sum(recall_at(r[q], qrels[q], 100) for q in chosen) / len(chosen), 4)
                           for row, r in ranked.items()},
            "fts5 / tantivy": round(p50["fts5 top-200"] / p50["tantivy top-200"], 1),
            "bm25s / tantivy": round(p50["bm25s top-200"] / p50["tantivy top-200"], 1)}
