"""What releasing embedding-cache rows costs the embedded engine's deletes, and what it reclaims.

    python bench/cache_reclaim.py [--documents 200] [--chunks 25] [--repeats 3]

Builds a KB of `documents` x `chunks` chunks (384-d vectors, no model: the vectors are random), fills the cache as
ingest does, then times replacing every document, deleting half of them one by one, and deleting the KB - once with
the release (adapters/embedded/sqlite_embedding_cache.release_vectors) and once with it disabled, in the same run.
Prints one JSON line per mode: median milliseconds per operation and the cache rows left at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "functions")]


def run(documents: int, chunks: int, release: bool) -> dict[str, Any]:
    import numpy as np

    from agentkb.adapters.embedded import index as sqlite_index
    from agentkb.adapters.embedded.sqlite import embedding_cache as cache_module
    from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
    from agentkb.adapters.embedded.sqlite.db import Database
    from agentkb.adapters.embedded.sqlite.embedding_cache import SqliteEmbeddingCache, vector_key
    from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase

    sqlite_index.release_vectors = cache_module.release_vectors if release else (lambda *_: None)  # type: ignore
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "bench.sqlite3")
        kb = KnowledgeBase("kb", "ws", "bench", None, EmbeddingProfile("m", 384), (), "2026-11-30T00:00:00Z")
        SqliteCatalog(db).create_knowledge_base(kb)
        index, cache = sqlite_index.SqliteIndex(db), SqliteEmbeddingCache(db)

        def write(d: int, revision: int) -> float:
            texts = [f"document {d} revision {revision} chunk {c}: " + "words " * 40 for c in range(chunks)]
            vectors = {vector_key(t, "Title"): rng.standard_normal(384).astype(np.float32).tolist() for t in texts}
            cache.put_many(kb.profile.key, vectors)
            doc = Document(f"d{d}", kb.id, kb.workspace_id, f"doc{d}.md", None, f"h{d}-{revision}", {}, chunks,
                           chunks * 50, "2026-11-30T00:00:00Z", revision)
            rows = [Chunk(f"d{d}-{c}", doc.id, c, t, 50, f"c{d}-{c}-{revision}", v, context="Title")
                    for c, (t, v) in enumerate(zip(texts, vectors.values(), strict=True))]
            start = time.perf_counter()
            index.write_document(kb, doc, rows)
            return (time.perf_counter() - start) * 1000

        for d in range(documents):
            write(d, 1)
        replace = [write(d, 2) for d in range(documents)]
        delete = []
        for d in range(0, documents, 2):
            start = time.perf_counter()
            index.delete_document(kb, f"d{d}")
            delete.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        index.delete_knowledge_base(kb)
        kb_ms = (time.perf_counter() - start) * 1000
        left = db.connection().execute("SELECT COUNT(*) FROM embedding_cache").fetchone()[0]
        db.close()
    return {"release": release, "documents": documents, "chunks_per_document": chunks,
            "replace_ms_median": round(statistics.median(replace), 2),
            "delete_document_ms_median": round(statistics.median(delete), 2),
            "delete_kb_ms": round(kb_ms, 1), "cache_rows_left": left}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for release in (False, True):
        runs = [run(args.documents, args.chunks, release) for _ in range(args.repeats)]
        best = min(runs, key=lambda r: r["replace_ms_median"])
        best["runs"] = [[r["replace_ms_median"], r["delete_document_ms_median"], r["delete_kb_ms"]] for r in runs]
        print(json.dumps(best))


if __name__ == "__main__":
    main()
