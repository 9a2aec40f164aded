"""The vector leg over one KB's table: the exact scan, or the approximate index with exact re-scoring.

- No index (a small KB), or a filter that leaves at most EXACT_ROWS rows: exact cosine over exactly the eligible
  rows.
- Otherwise the index proposes candidates (inside the filter when there is one: a selector over eligible rowids),
  over-fetching RESCORE candidates beyond k; if a filter leaves fewer than k hits in the lists searched, more lists
  are searched until k are found (or every list was, and the scan answers). The candidates are re-scored from the
  table's vectors; a float16 table's best are re-scored again from SQLite's float32 (vectors/rescore.py), so ties
  and order are those of the exact scan.
"""

from __future__ import annotations

import numpy as np

from agentkb.adapters.embedded.vectors.ann import NPROBE, bitmap
from agentkb.adapters.embedded.vectors.rescore import Exact, nearest_exact, scores
from agentkb.adapters.embedded.vectors.store import ChunkTable

EXACT_ROWS = 20_000  # a filter leaving this few rows is answered exactly (a gather + product of <= 30 MB)
RESCORE = 64  # candidates fetched beyond k for the exact re-scoring


def nearest(table: ChunkTable, q: np.ndarray, k: int, allowed: np.ndarray | None = None,
            exact: Exact | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, cosine scores) of the top k rows with a vector (and in `allowed`, a mask over positions),
    best first, ties by rowid; `exact` reads float32 vectors to re-score a float16 table's best with."""
    eligible = table.has_vector if allowed is None else table.has_vector & allowed
    count = int(np.count_nonzero(eligible))
    k = min(k, count)
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    ann = table.ann
    if ann is None or (allowed is not None and count <= EXACT_ROWS):
        return _ranked(table, q, k, *_exact(table, q, count, eligible), exact)
    found = _approximate(table, q, k, eligible if allowed is not None else None)
    if found is None:  # every list searched and still short of k: the scan answers
        return _ranked(table, q, k, *_exact(table, q, count, eligible), exact)
    return _ranked(table, q, k, found, scores(table.vectors, q, found), exact)


def _exact(table: ChunkTable, q: np.ndarray, count: int, eligible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(positions, scores) of every eligible row."""
    n = len(table.rowids)
    if count == n:
        return np.arange(n), scores(table.vectors, q)
    candidates = np.flatnonzero(eligible)
    # Few rows: gather them; many: score the whole matrix and pick (gathering would copy most of it).
    return candidates, scores(table.vectors, q, candidates) if count * 4 < n else scores(table.vectors, q)[candidates]


def _ranked(table: ChunkTable, q: np.ndarray, k: int, candidates: np.ndarray, sims: np.ndarray,
            exact: Exact | None) -> tuple[np.ndarray, np.ndarray]:
    if exact is not None and table.vectors.dtype != np.float32:
        candidates, sims = nearest_exact(table.rowids, candidates, sims, q, k, exact)
    return _top(table, candidates, sims, k)


def _approximate(table: ChunkTable, q: np.ndarray, k: int, eligible: np.ndarray | None) -> np.ndarray | None:
    """Positions of the candidates (at least k of them eligible), or None when the index cannot give k."""
    ann = table.ann
    allowed = None if eligible is None else bitmap(table.rowids[eligible])
    nprobe, fetch = NPROBE, k + RESCORE
    with ann.lock:
        lists = ann.lists
        while True:
            rowids = ann.search(q, fetch, nprobe, allowed)
            pos, found = table.positions(rowids)
            ok = found & table.has_vector[pos]
            if eligible is not None:
                ok &= eligible[pos]
            if int(np.count_nonzero(ok)) >= k:
                return pos[ok]  # type: ignore[no-any-return]
            if nprobe >= lists:
                return None
            nprobe *= 4


def _top(table: ChunkTable, candidates: np.ndarray, sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
    rows = candidates[top]
    order = np.lexsort((table.rowids[rows], -sims[top]))
    return rows[order], sims[top][order]
