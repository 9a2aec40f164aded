"""Which approximate index for the embedded engine's large KBs? faiss IVF-SQ8 (what agentkb uses, vectors/ann.py),
usearch HNSW and hnswlib HNSW on the same N vectors near SciFact's, measured one after another in one run.

    python -m bench.scale.ann_compare --cache /tmp/scale --dataset bench/data/scifact --n 100000 [--json]

Needs the SciFact KB `bench.scale.scale` ingested into --cache. For each library: build seconds (2 threads), index
memory (its serialised size), recall@10 after exact float32 re-scoring of k+64 candidates (real SciFact queries,
against exact search over the same vectors), p50 ms per query (1 thread) and the update cost (ms to remove and
re-add 1,000 rows). IVF-SQ8 is built as agentkb builds it, on one thread. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.beir import load_qrels, load_queries, percentile
from bench.scale.data import near_vectors

K, RESCORE, UPDATES = 10, 64, 1000


def _vectors(cache: Path, n: int, noise: float) -> np.ndarray:
    conn = sqlite3.connect(f"file:{cache / 'agentkb' / 'agentkb.sqlite3'}?mode=ro", uri=True)
    rows = conn.execute("SELECT c.embedding FROM chunks c JOIN knowledge_bases k ON k.id = c.knowledge_base_id"
                        " WHERE k.name LIKE 'scifact-%' AND c.embedding IS NOT NULL").fetchall()
    real = np.frombuffer(b"".join(r[0] for r in rows), np.float32).reshape(len(rows), -1)
    rng = np.random.default_rng(0)
    return near_vectors(real, rng.integers(0, len(real), n), noise, rng)


def _faiss_ivf(x: np.ndarray, ids: np.ndarray, tmp: Path) -> dict[str, Any]:
    from agentkb.adapters.embedded.vectors.ann import NPROBE, Ann

    t0 = time.perf_counter()
    ann = Ann.build(ids, x)  # as agentkb builds it: one thread (the HNSW builds get two)
    build = time.perf_counter() - t0
    ann.save(tmp / "ivf.faiss")
    return {"build_s": build, "bytes": (tmp / "ivf.faiss").stat().st_size,
            "search": lambda q: ann.search(q, K + RESCORE, NPROBE, None),
            "probes": lambda nprobe: lambda q: ann.search(q, K + RESCORE, nprobe, None),
            "update": lambda r, v: (ann.remove(r), ann.add(r, v))}


def _usearch(x: np.ndarray, ids: np.ndarray, tmp: Path) -> dict[str, Any]:
    from usearch.index import Index

    index = Index(ndim=x.shape[1], metric="ip", dtype="i8", connectivity=16, expansion_add=128,
                  expansion_search=128)
    t0 = time.perf_counter()
    index.add(ids.astype(np.uint64), x, threads=2)
    build = time.perf_counter() - t0
    index.save(str(tmp / "u.usearch"))
    return {"build_s": build, "bytes": (tmp / "u.usearch").stat().st_size,
            "search": lambda q: index.search(q, K + RESCORE, threads=1).keys.astype(np.int64),
            "update": lambda r, v: (index.remove(r.astype(np.uint64)), index.add(r.astype(np.uint64), v))}


def _hnswlib(x: np.ndarray, ids: np.ndarray, tmp: Path) -> dict[str, Any]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=x.shape[1])
    index.init_index(max_elements=len(x) + UPDATES, M=16, ef_construction=128, allow_replace_deleted=True)
    index.set_num_threads(2)
    t0 = time.perf_counter()
    index.add_items(x, ids)
    build = time.perf_counter() - t0
    index.set_num_threads(1)
    index.set_ef(128)
    index.save_index(str(tmp / "h.bin"))

    def update(r: np.ndarray, v: np.ndarray) -> None:
        for key in r.tolist():
            index.mark_deleted(key)
        index.add_items(v, r, replace_deleted=True)

    return {"build_s": build, "bytes": (tmp / "h.bin").stat().st_size,
            "search": lambda q: index.knn_query(q, K + RESCORE)[0][0].astype(np.int64), "update": update}


LIBRARIES: dict[str, Callable[[np.ndarray, np.ndarray, Path], dict[str, Any]]] = {
    "faiss IVF-SQ8 (agentkb)": _faiss_ivf, "usearch HNSW i8": _usearch, "hnswlib HNSW f32": _hnswlib}


def _quality(x: np.ndarray, queries: np.ndarray, exact: list[set[int]],
             search: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
    """(recall@10 after exact re-scoring, p50 ms) of a search."""
    latencies, recalls = [], []
    for q, truth in zip(queries, exact, strict=True):
        t0 = time.perf_counter()
        found = search(q)
        found = found[found >= 0]
        top = found[np.argsort(-(x[found] @ q))[:K]]
        latencies.append((time.perf_counter() - t0) * 1000)
        recalls.append(len(truth & set(top.tolist())) / K)
    return round(float(np.mean(recalls)), 4), round(percentile(latencies, 0.5), 3)


def measure(x: np.ndarray, queries: np.ndarray, names: list[str], probes: list[int]) -> dict[str, Any]:
    ids = np.arange(len(x), dtype=np.int64)
    exact = [set(np.argpartition(-(x @ q), K)[:K].tolist()) for q in queries]
    out: dict[str, Any] = {}
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            lib = LIBRARIES[name](x, ids, Path(tmp))
            recall, p50 = _quality(x, queries, exact, lib["search"])
            sweep = {str(n): _quality(x, queries, exact, lib["probes"](n)) for n in probes} if "probes" in lib else {}
            rows = np.random.default_rng(1).choice(len(x), UPDATES, replace=False).astype(np.int64)
            t0 = time.perf_counter()
            lib["update"](rows, x[rows])
            out[name] = {"build_s": round(lib["build_s"], 1), "index_mb": round(lib["bytes"] / 2**20, 1),
                         "recall_at_10": recall, "p50_ms": p50,
                         "update_ms_per_1000_rows": round((time.perf_counter() - t0) * 1000, 1),
                         **({"recall_and_p50_by_lists_probed": sweep} if sweep else {})}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--noise", type=float, default=0.015)
    parser.add_argument("--only", action="append", choices=list(LIBRARIES), default=None)
    parser.add_argument("--probes", default="", help="IVF lists to probe in a sweep, e.g. 32,64,128,256")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("AGENTKB_DATA_DIR", str(args.cache / "agentkb"))
    from agentkb.adapters.embedded.embedder import local_embedder

    x = _vectors(args.cache, args.n, args.noise)
    qrels, texts = load_qrels(args.dataset, "train"), load_queries(args.dataset)
    embedder = local_embedder()
    queries = np.asarray([embedder.embed_query(texts[q]) for q in list(qrels)[:args.queries]], np.float32)
    print(json.dumps({"bench": "ann_compare", "n": args.n, "noise": args.noise, "queries": len(queries),
                      "libraries": measure(x, queries, args.only or list(LIBRARIES),
                                           [int(p) for p in args.probes.split(",") if p])}))


if __name__ == "__main__":
    main()
