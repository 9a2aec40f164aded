"""Per knowledge base, in memory: every chunk's rowid, ids and float32 vector, refreshed when the KB's version moves.

The legs score rowids (numpy for vectors, tantivy for BM25) and name their hits from this table, so no leg reads
SQLite rows on the hot path; only the final top-k is hydrated from SQLite.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass
class ChunkTable:
    version: int
    rowids: np.ndarray  # int64, sorted
    chunk_ids: list[str]
    document_ids: list[str]
    vectors: np.ndarray  # float32 [n, d], L2-normalised; zero rows where a chunk has no vector
    has_vector: np.ndarray  # bool [n]

    def positions(self, rowids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions in this table, mask of the rowids found) for a batch of rowids."""
        ids = np.asarray(rowids, dtype=np.int64)
        if not len(self.rowids):
            return np.zeros(len(ids), np.int64), np.zeros(len(ids), bool)
        pos = np.searchsorted(self.rowids, ids)
        safe = np.minimum(pos, len(self.rowids) - 1)
        return safe, self.rowids[safe] == ids


class ChunkTables:
    """The tables of every existing KB this process searched, checked against the KB version on each use."""

    def __init__(self) -> None:
        self._tables: dict[str, ChunkTable] = {}
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, kb_id: str, version: int | None = None) -> ChunkTable:
        """The KB's table at `version` (read from SQLite when the caller has not just read it)."""
        if version is None:
            row = conn.execute("SELECT version FROM knowledge_bases WHERE id = ?", (kb_id,)).fetchone()
            if row is None:  # deleted by another process, or never created: nothing to keep
                self.forget(kb_id)
                return _load(conn, kb_id, -1)
            version = int(row[0])
        cached = self._tables.get(kb_id)
        if cached is not None and cached.version == version:
            return cached
        with self._lock:
            cached = self._tables.get(kb_id)
            if cached is not None and cached.version == version:
                return cached
            table = self._tables[kb_id] = _load(conn, kb_id, version)
        return table

    def forget(self, kb_id: str) -> None:
        """Drop a deleted KB's table (a server with KB churn would otherwise keep every one it ever searched)."""
        with self._lock:
            self._tables.pop(kb_id, None)


def _load(conn: sqlite3.Connection, kb_id: str, version: int) -> ChunkTable:
    rows = conn.execute("SELECT rowid, id, document_id, embedding FROM chunks WHERE knowledge_base_id = ?"
                        " ORDER BY rowid", (kb_id,)).fetchall()
    rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    width = next((len(r[3]) // 4 for r in rows if r[3]), 1)
    vectors = np.zeros((len(rows), width), dtype=np.float32)
    has_vector = np.zeros(len(rows), dtype=bool)
    for i, r in enumerate(rows):
        if r[3] and len(r[3]) == 4 * width:
            vectors[i] = np.frombuffer(r[3], dtype=np.float32)
            has_vector[i] = True
    return ChunkTable(version, rowids, [r[1] for r in rows], [r[2] for r in rows], vectors, has_vector)
