"""The chunk vectors' change log in SQLite, and reading a KB's rows at native speed.

Triggers log the rowid of every chunk inserted, updated or deleted in `vector_log`, inside the transaction that
writes the chunk (like the lexical log). A cached table or a persisted index that applied the log up to seq S is
caught up by re-reading the rows it names from what SQLite holds now: applying is idempotent (drop the rowid, then
add it back if it still exists), so a crash between SQLite and any copy never loses or duplicates a chunk.
The log is pruned to its last KEEP_LOG entries; a copy that fell further behind is rebuilt from SQLite. Pruning
never deletes the newest entry, so `seq` (a plain rowid alias: AUTOINCREMENT's bookkeeping per insert would cost a
bulk write a third of its rate) only grows. No index beyond the key: a catch-up reads the short range after its seq.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import numpy as np

import agentkb.adapters.embedded.sqlite.catalog  # noqa: F401  (the chunks table must exist before its triggers)
from agentkb.adapters.embedded.sqlite.db import register_schema

register_schema("vectors", """
CREATE TABLE IF NOT EXISTS vector_log (
    seq INTEGER PRIMARY KEY, knowledge_base_id TEXT NOT NULL, chunk_rowid INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS chunks_vector_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO vector_log (knowledge_base_id, chunk_rowid) VALUES (new.knowledge_base_id, new.rowid); END;
CREATE TRIGGER IF NOT EXISTS chunks_vector_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO vector_log (knowledge_base_id, chunk_rowid) VALUES (old.knowledge_base_id, old.rowid); END;
CREATE TRIGGER IF NOT EXISTS chunks_vector_au AFTER UPDATE OF embedding, id, document_id ON chunks BEGIN
    INSERT INTO vector_log (knowledge_base_id, chunk_rowid) VALUES (new.knowledge_base_id, new.rowid); END;
""")

INSERT_TRIGGER = "chunks_vector_ai"  # the bulk path (sqlite/bulk_load.py) suspends it and calls log_appended
KEEP_LOG = 500_000  # entries kept; a copy further behind is rebuilt from SQLite (persisted indexes save sooner)
PAGE = 32_768  # rows per read: bounded memory whatever the KB's size
HEADROOM = 1.5


@dataclass(frozen=True)
class Rows:
    """A batch of chunk rows as arrays: rowids ascending, ids, float32 vectors and which rows have one."""

    rowids: np.ndarray
    chunk_ids: list[str]
    document_ids: list[str]
    vectors: np.ndarray
    has_vector: np.ndarray

    @classmethod
    def empty(cls, width: int) -> Rows:
        return cls(np.zeros(0, np.int64), [], [], np.zeros((0, width), np.float32), np.zeros(0, bool))


def head(conn: sqlite3.Connection) -> int:
    """The last sequence the log ever handed out (0: nothing logged yet)."""
    row = conn.execute("SELECT max(seq) FROM vector_log").fetchone()
    return int(row[0]) if row[0] is not None else 0


def complete_since(conn: sqlite3.Connection, seq: int) -> bool:
    """Whether the log still holds every entry after `seq` (pruning may have dropped some)."""
    row = conn.execute("SELECT min(seq) FROM vector_log").fetchone()
    floor = head(conn) if row[0] is None else int(row[0]) - 1
    return floor <= seq <= head(conn)


def log_appended(conn: sqlite3.Connection, after_rowid: int) -> None:
    """What INSERT_TRIGGER logs, for every chunk row after `after_rowid`, in one statement (a bulk load)."""
    conn.execute("INSERT INTO vector_log (knowledge_base_id, chunk_rowid) SELECT knowledge_base_id, rowid FROM chunks"
                 " WHERE rowid > ? ORDER BY rowid", (after_rowid,))


def changed_rowids(conn: sqlite3.Connection, kb_id: str, after: int, upto: int) -> np.ndarray:
    """The rowids of the KB's chunks written since `after` (each once, ascending)."""
    rows = conn.execute("SELECT DISTINCT chunk_rowid FROM vector_log WHERE knowledge_base_id = ? AND seq > ?"
                        " AND seq <= ? ORDER BY chunk_rowid", (kb_id, after, upto)).fetchall()
    return np.fromiter((r[0] for r in rows), np.int64, len(rows))


def prune(conn: sqlite3.Connection) -> None:
    """Forget all but the last KEEP_LOG entries (a write, so only when there is much to forget)."""
    last = head(conn)
    row = conn.execute("SELECT min(seq) FROM vector_log").fetchone()
    if row[0] is not None and last - int(row[0]) > KEEP_LOG + KEEP_LOG // 2:  # never the newest entry
        conn.execute("DELETE FROM vector_log WHERE seq <= ?", (last - KEEP_LOG,))


def width_of(conn: sqlite3.Connection, kb_id: str) -> int:
    """The width of the KB's first stored vector (1 while none is stored): rows of another width have none."""
    row = conn.execute("SELECT length(embedding) FROM chunks WHERE knowledge_base_id = ? AND embedding IS NOT NULL"
                       " ORDER BY rowid LIMIT 1", (kb_id,)).fetchone()
    return int(row[0]) // 4 if row and row[0] else 1


_SELECT = ("SELECT rowid, id, document_id, length(embedding) = :bytes,"
           " CASE WHEN length(embedding) = :bytes THEN embedding ELSE zeroblob(:bytes) END"
           " FROM chunks WHERE knowledge_base_id = :kb {extra} ORDER BY rowid")


def read_rows(conn: sqlite3.Connection, kb_id: str, width: int, rowids: np.ndarray | None = None,
              half_from: int | None = None) -> Rows:
    """The KB's rows (all, or those of `rowids` that still exist), read page by page into contiguous arrays:
    every vector lands in one matrix through one join per page, no Python work per row. The matrix is float32, or
    float16 when the whole KB is read and has at least `half_from` rows (vectors/rescore.py re-scores from SQLite)."""
    params: dict[str, object] = {"bytes": 4 * width, "kb": kb_id}
    if rowids is None:
        total = int(conn.execute("SELECT count(*) FROM chunks WHERE knowledge_base_id = ?", (kb_id,)).fetchone()[0])
        cursor = conn.execute(_SELECT.format(extra=""), params)
        return _fill(cursor, total, width, np.float16 if half_from is not None and total >= half_from else np.float32)
    parts = [_fill(conn.execute(_SELECT.format(extra=f"AND rowid IN ({','.join(map(str, part.tolist()))})"),
                                params), len(part), width)
             for part in np.array_split(rowids, max(1, -(-len(rowids) // 500)))] if len(rowids) else []
    return concat(parts, width)


def _fill(cursor: sqlite3.Cursor, count: int, width: int, dtype: type = np.float32) -> Rows:
    # Headroom for appends: zero pages cost no memory until written, and the table adopts these arrays
    # (vectors/store.py), so a KB read whole is never copied into bigger ones.
    capacity = int(count * HEADROOM) + 16
    rowids = np.zeros(capacity, np.int64)
    vectors: np.ndarray = np.zeros((capacity, width), dtype)
    has_vector = np.zeros(capacity, bool)
    chunk_ids: list[str] = []
    document_ids: list[str] = []
    n = 0
    while page := cursor.fetchmany(PAGE):
        if n + len(page) > capacity:  # rows written since the count: grow (rare, the read is one snapshot)
            extra = n + len(page) - capacity
            rowids, has_vector = np.concatenate([rowids, np.zeros(extra, np.int64)]), np.concatenate(
                [has_vector, np.zeros(extra, bool)])
            vectors = np.concatenate([vectors, np.zeros((extra, width), dtype)])
            capacity += extra
        columns = list(zip(*page, strict=True))
        m = len(page)
        rowids[n:n + m] = columns[0]
        chunk_ids.extend(columns[1])
        document_ids.extend(columns[2])
        has_vector[n:n + m] = np.asarray(columns[3], dtype=object) == 1
        vectors[n:n + m] = np.frombuffer(b"".join(columns[4]), np.float32).reshape(m, width)
        n += m
    return Rows(rowids[:n], chunk_ids, document_ids, vectors[:n], has_vector[:n])


def concat(parts: list[Rows], width: int) -> Rows:
    if not parts:
        return Rows.empty(width)
    if len(parts) == 1:
        return parts[0]
    return Rows(np.concatenate([p.rowids for p in parts]), [i for p in parts for i in p.chunk_ids],
                [i for p in parts for i in p.document_ids], np.concatenate([p.vectors for p in parts]),
                np.concatenate([p.has_vector for p in parts]))
