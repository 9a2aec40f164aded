"""LanceDB on the very chunks (texts and vectors) of the N-chunk KB: the peer of the scale benchmark.

Built once per cache dir: a table of (name, text, vector), its native FTS index and, from INDEX_FROM rows, its
default vector index (IVF_PQ, cosine), so the vector leg is not a brute-force scan where agentkb's is not.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

PAGE = 50_000
INDEX_FROM = 50_000


def _batches(conn: sqlite3.Connection, kb_id: str, width: int) -> Iterator[Any]:
    import pyarrow as pa

    cursor = conn.execute("SELECT d.name, c.context, c.content, c.embedding FROM chunks c JOIN documents d"
                          " ON d.id = c.document_id WHERE c.knowledge_base_id = ? AND c.embedding IS NOT NULL"
                          " ORDER BY c.rowid", (kb_id,))
    while page := cursor.fetchmany(PAGE):
        vectors = np.frombuffer(b"".join(r[3] for r in page), np.float32)
        yield pa.record_batch({
            "name": [r[0] for r in page], "text": [f"{r[1]}\n{r[2]}" if r[1] else r[2] for r in page],
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors), width)})


def open_lancedb(path: Path, conn: sqlite3.Connection, kb_id: str, width: int) -> tuple[Any, dict[str, float]]:
    """The LanceDB table (built if missing) and its build seconds (0 when reused)."""
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(path))
    stats: dict[str, float] = {}
    if "chunks" not in db.table_names():
        t0 = time.perf_counter()
        schema = pa.schema([("name", pa.string()), ("text", pa.string()),
                            ("vector", pa.list_(pa.float32(), width))])
        table = db.create_table("chunks", data=_batches(conn, kb_id, width), schema=schema)
        table.create_fts_index("text", use_tantivy=False)
        rows = table.count_rows()
        if rows >= INDEX_FROM:
            table.create_index(metric="cosine", vector_column_name="vector")
        stats = {"lancedb_build_s": round(time.perf_counter() - t0, 1), "lancedb_rows": rows}
    return db.open_table("chunks"), stats


def searches(table: Any, top_k: int) -> tuple[Callable[[str, np.ndarray], list[str]],
                                               Callable[[np.ndarray], list[str]]]:
    def hybrid(query: str, vector: np.ndarray) -> list[str]:
        found = (table.search(query_type="hybrid").vector(vector.tolist()).text(query).limit(top_k)
                 .select(["name"]).to_list())
        return [r["name"] for r in found]

    def vector_only(vector: np.ndarray) -> list[str]:
        return [r["name"] for r in table.search(vector.tolist()).limit(top_k).select(["name"]).to_list()]

    return hybrid, vector_only
