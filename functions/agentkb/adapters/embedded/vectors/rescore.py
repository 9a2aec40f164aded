"""Exact scores for a float16 table: the best candidates re-scored with the float32 vectors SQLite holds.

A KB large enough for an approximate index keeps its in-memory vectors as float16 (half of float32's memory: 0.77
GB instead of 1.5 GB at 1M x 384). float16 keeps ~3 significant digits, enough to pick candidates but not to order
near ties the way the exact scan does, so the top k + EXTRA by float16 are read back from SQLite (a primary-key
lookup per row) and ranked by their float32 cosine: the hits and their scores are those of float32.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import numpy as np

EXTRA = 16  # candidates re-scored beyond k
BLOCK = 65_536  # float16 rows converted to float32 per product (a full scan never copies the whole matrix)

Exact = Callable[[np.ndarray], np.ndarray]  # rowids -> their float32 vectors (zero rows where none is stored)


def reader(conn: sqlite3.Connection, width: int) -> Exact:
    """Reads float32 vectors by rowid from SQLite (a vector of another width reads as zeros)."""
    def read(rowids: np.ndarray) -> np.ndarray:
        out = np.zeros((len(rowids), width), np.float32)
        if not len(rowids):
            return out
        where = {int(r): i for i, r in enumerate(rowids.tolist())}
        for rowid, blob in conn.execute(
                f"SELECT rowid, embedding FROM chunks WHERE rowid IN ({','.join(map(str, where))})"):
            if blob is not None and len(blob) == 4 * width:
                out[where[int(rowid)]] = np.frombuffer(blob, np.float32)
        return out
    return read


def scores(vectors: np.ndarray, q: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Cosine of `q` with the rows (all, or those at `rows`), in float32 whatever the table's dtype."""
    if vectors.dtype == np.float32:
        return vectors @ q if rows is None else vectors[rows] @ q  # type: ignore[no-any-return]
    n = len(vectors) if rows is None else len(rows)
    out = np.empty(n, np.float32)
    for start in range(0, n, BLOCK):
        part = vectors[start:start + BLOCK] if rows is None else vectors[rows[start:start + BLOCK]]
        out[start:start + BLOCK] = part.astype(np.float32) @ q
    return out


def nearest_exact(rowids: np.ndarray, candidates: np.ndarray, sims: np.ndarray, q: np.ndarray, k: int,
                  exact: Exact) -> tuple[np.ndarray, np.ndarray]:
    """The best k + EXTRA of the candidates (positions, float16 scores) with their float32 scores instead."""
    keep = k + EXTRA
    if keep < len(sims):
        best = np.argpartition(-sims, keep - 1)[:keep]
        candidates = candidates[best]
    return candidates, exact(rowids[candidates]) @ q
