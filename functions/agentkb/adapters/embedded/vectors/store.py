"""One KB's chunk rows in growable arrays, changed in place by a write's own rows (never reloaded whole).

Rows stay sorted by rowid with one entry per rowid. A write's rows are applied by rowid: an entry whose row is
gone is marked dead, a row still there is overwritten in place, a new row is appended at the tail (SQLite hands
out rowids in ascending order). Dead entries are compacted away once they are a quarter of the table. Searches
read a `ChunkTable` snapshot: arrays cut at the length they saw, so an append never shows them a half-written row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agentkb.adapters.embedded.vectors.changes import Rows, concat

GROWTH = 1.5
COMPACT_MIN = 4096


@dataclass
class ChunkTable:
    version: int
    rowids: np.ndarray  # int64, sorted, unique
    chunk_ids: list[str]  # indexed by position; may run past len(rowids) (rows appended after this snapshot)
    document_ids: list[str]
    vectors: np.ndarray  # float32 [n, d] (float16 with an index), L2-normalised; zero rows where a chunk has none
    has_vector: np.ndarray  # bool [n]; False for dead entries too
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # bool [n]: the row exists
    ann: Any = None  # the approximate index (vectors/ann.py) once the KB is large, else None
    seq: int = 0  # the change log sequence this snapshot reflects

    def positions(self, rowids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(positions in this table, mask of the rowids found) for a batch of rowids."""
        ids = np.asarray(rowids, dtype=np.int64)
        if not len(self.rowids):
            return np.zeros(len(ids), np.int64), np.zeros(len(ids), bool)
        pos = np.searchsorted(self.rowids, ids)
        safe = np.minimum(pos, len(self.rowids) - 1)
        found = self.rowids[safe] == ids
        if len(self.live) == len(self.rowids):
            found &= self.live[safe]
        return safe, found


class KbVectors:
    """The growable arrays behind a KB's snapshots."""

    def __init__(self, rows: Rows) -> None:
        self.width = rows.vectors.shape[1]
        self._set(rows)

    def _set(self, rows: Rows) -> None:
        n = len(rows.rowids)
        capacity = max(16, int(n * GROWTH))
        self.rowids = _buffer(rows.rowids, n, capacity)
        self.vectors = _buffer(rows.vectors, n, capacity)
        self.has_vector = _buffer(rows.has_vector, n, capacity)
        if not len(self.rowids) == len(self.vectors) == len(self.has_vector):
            self.rowids, self.vectors, self.has_vector = (_buffer(a[:n].copy(), n, capacity)
                                                          for a in (self.rowids, self.vectors, self.has_vector))
        self.live = np.zeros(len(self.rowids), bool)
        self.live[:n] = True
        self.chunk_ids, self.document_ids = list(rows.chunk_ids), list(rows.document_ids)
        self.n, self.dead = n, 0

    def snapshot(self, version: int, seq: int, ann: Any) -> ChunkTable:
        n = self.n
        return ChunkTable(version, self.rowids[:n], self.chunk_ids, self.document_ids, self.vectors[:n],
                          self.has_vector[:n], self.live[:n], ann, seq)

    def halve(self) -> None:
        """Keep the vectors as float16 (a KB with an approximate index: its hits are re-scored from SQLite)."""
        if self.vectors.dtype != np.float16:
            vectors = np.zeros(self.vectors.shape, np.float16)  # untouched headroom stays unallocated
            vectors[:self.n] = self.vectors[:self.n]
            self.vectors = vectors

    def live_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """(rowids, vectors) of every live row that has a vector (what an approximate index holds)."""
        mask = self.has_vector[:self.n]
        return self.rowids[:self.n][mask], self.vectors[:self.n][mask]

    def apply(self, touched: np.ndarray, now: Rows) -> None:
        """Bring the rows of `touched` (sorted rowids) to `now` (those of them that exist, sorted)."""
        n = self.n
        pos = np.minimum(np.searchsorted(self.rowids[:n], touched), max(n - 1, 0))
        found = (self.rowids[:n][pos] == touched) if n else np.zeros(len(touched), bool)
        was_live = int(self.live[pos[found]].sum()) if n else 0
        self.live[pos[found]] = False
        self.has_vector[pos[found]] = False
        self.dead += was_live
        if len(now.rowids):
            at = np.searchsorted(touched, now.rowids)
            kept = found[at]
            self._overwrite(pos[at[kept]], now, np.flatnonzero(kept))
            self._append(now, np.flatnonzero(~kept))
        if self.dead > max(COMPACT_MIN, self.n // 4):
            self._compact()

    def _overwrite(self, positions: np.ndarray, now: Rows, which: np.ndarray) -> None:
        if not len(which):
            return
        self.vectors[positions] = now.vectors[which]
        self.has_vector[positions] = now.has_vector[which]
        for p, i in zip(positions.tolist(), which.tolist(), strict=True):
            self.chunk_ids[p], self.document_ids[p] = now.chunk_ids[i], now.document_ids[i]
        self.live[positions] = True
        self.dead -= len(which)

    def _append(self, now: Rows, which: np.ndarray) -> None:
        if not len(which):
            return
        rowids = now.rowids[which]
        if self.n and rowids[0] <= self.rowids[self.n - 1]:  # below the tail: merge (rowid reuse, rare)
            self._merge(now, which)
            return
        if self.n + len(which) > len(self.rowids):
            self._grow(self.n + len(which))
        end = self.n + len(which)
        self.rowids[self.n:end], self.vectors[self.n:end] = rowids, now.vectors[which]
        self.has_vector[self.n:end], self.live[self.n:end] = now.has_vector[which], True
        del self.chunk_ids[self.n:], self.document_ids[self.n:]
        self.chunk_ids.extend(now.chunk_ids[i] for i in which.tolist())
        self.document_ids.extend(now.document_ids[i] for i in which.tolist())
        self.n = end  # last: a snapshot taken meanwhile never sees the rows being written

    def _grow(self, need: int) -> None:
        """New, larger arrays (snapshots already handed out keep the old ones)."""
        capacity = max(need, int(len(self.rowids) * GROWTH) + 16)
        for name in ("rowids", "has_vector", "live"):
            old = getattr(self, name)
            new = np.zeros(capacity, old.dtype)
            new[:self.n] = old[:self.n]
            setattr(self, name, new)
        vectors = np.zeros((capacity, self.width), self.vectors.dtype)
        vectors[:self.n] = self.vectors[:self.n]
        self.vectors = vectors
        self.chunk_ids, self.document_ids = self.chunk_ids[:self.n], self.document_ids[:self.n]

    def _rows(self) -> Rows:
        keep = np.flatnonzero(self.live[:self.n])
        return Rows(self.rowids[keep], [self.chunk_ids[i] for i in keep.tolist()],
                    [self.document_ids[i] for i in keep.tolist()], self.vectors[keep], self.has_vector[keep])

    def _merge(self, now: Rows, which: np.ndarray) -> None:
        added = Rows(now.rowids[which], [now.chunk_ids[i] for i in which.tolist()],
                     [now.document_ids[i] for i in which.tolist()], now.vectors[which].astype(self.vectors.dtype),
                     now.has_vector[which])
        both = concat([self._rows(), added], self.width)
        order = np.argsort(both.rowids, kind="stable")
        self._set(Rows(both.rowids[order], [both.chunk_ids[i] for i in order.tolist()],
                       [both.document_ids[i] for i in order.tolist()], both.vectors[order], both.has_vector[order]))

    def _compact(self) -> None:
        self._set(self._rows())


def _buffer(view: np.ndarray, n: int, capacity: int) -> np.ndarray:
    """The array `view` starts (when it has room past its n rows: adopted, not copied), else a copy with room."""
    base = view.base
    if (isinstance(base, np.ndarray) and base.shape[1:] == view.shape[1:] and len(base) > n and base.flags.c_contiguous
            and base.ctypes.data == view.ctypes.data and base.dtype == view.dtype):
        return base
    out = np.zeros((capacity, *view.shape[1:]), view.dtype)
    out[:n] = view
    return out
