"""The approximate index of a large KB: faiss IVF lists of 8-bit scalar-quantised codes, keyed by chunk rowid.

Chosen by measurement (README Decisions, docs/measurements.md): against HNSW (usearch, hnswlib, faiss) it builds in
seconds where HNSW takes minutes on this machine, updates per write in microseconds (remove by rowid through a
hash-table direct map, add into the nearest list), keeps a quarter of float32's memory, and searches with a
filter natively (an id selector). Its candidates are re-scored from the table's float16 vectors, then the best
exactly from SQLite's float32 (vectors/rescore.py), so the codes' rounding never orders the hits. Callers hold
the lock: faiss does not search while it changes.
"""

from __future__ import annotations

import importlib
import math
import threading
from pathlib import Path
from typing import Any

import numpy as np

THRESHOLD = 50_000  # live vectors from which a KB is searched through the index (below: the exact scan)
DROP_BELOW = THRESHOLD // 2  # a KB that shrinks below this goes back to the exact scan alone
NPROBE = 128  # lists searched first (recall@10 1.0 at 100k, 0.964 with 32: docs/measurements.md); x4 while a
# filter leaves fewer than k hits
TRAIN_PER_LIST = 40  # k-means sample: vectors per list (faiss asks for 39)
RETRAIN_GROWTH = 4.0  # lists are trained for the size at build; a KB grown this much is rebuilt
ADD_BATCH = 65_536  # rows converted to float32 per add


def lists_for(n: int) -> int:
    return max(64, int(2 * math.sqrt(max(n, 1))))


class Ann:
    """One KB's IVF-SQ8 index; `lock` guards every use."""

    def __init__(self, index: Any, built_for: int) -> None:
        self.index = index
        self.built_for = built_for
        self.lock = threading.RLock()

    @classmethod
    def build(cls, rowids: np.ndarray, vectors: np.ndarray) -> Ann:
        faiss = _faiss()
        faiss.omp_set_num_threads(1)  # like the exact scan: one thread, the query's other legs need the cores
        n, width = vectors.shape
        nlist = lists_for(n)
        quantizer = faiss.IndexFlatIP(width)
        index = faiss.IndexIVFScalarQuantizer(quantizer, width, nlist, faiss.ScalarQuantizer.QT_8bit,
                                              faiss.METRIC_INNER_PRODUCT)
        index.cp.niter = 10
        sample = vectors if n <= nlist * TRAIN_PER_LIST else vectors[
            np.random.default_rng(0).choice(n, nlist * TRAIN_PER_LIST, replace=False)]
        index.train(np.ascontiguousarray(sample, dtype=np.float32))
        index.set_direct_map_type(faiss.DirectMap.Hashtable)
        ann = cls(index, n)
        ann.add(rowids, vectors)
        return ann

    def __len__(self) -> int:
        return int(self.index.ntotal)

    @property
    def lists(self) -> int:
        return int(self.index.nlist)

    def outgrown(self, n: int) -> bool:
        return n > RETRAIN_GROWTH * self.built_for

    def add(self, rowids: np.ndarray, vectors: np.ndarray) -> None:
        """Add rows (float32 or float16 vectors: converted a batch at a time, never the whole matrix at once)."""
        for start in range(0, len(rowids), ADD_BATCH):
            self.index.add_with_ids(np.ascontiguousarray(vectors[start:start + ADD_BATCH], dtype=np.float32),
                                    np.ascontiguousarray(rowids[start:start + ADD_BATCH], dtype=np.int64))

    def remove(self, rowids: np.ndarray) -> None:
        """Drop the rowids the index holds (others are ignored)."""
        faiss = _faiss()
        if len(rowids):
            ids = np.ascontiguousarray(rowids, dtype=np.int64)
            self.index.remove_ids(faiss.IDSelectorArray(len(ids), faiss.swig_ptr(ids)))

    def search(self, q: np.ndarray, fetch: int, nprobe: int, allowed: np.ndarray | None) -> np.ndarray:
        """The rowids of up to `fetch` nearest codes in the `nprobe` nearest lists; `allowed` (a bitmap by rowid,
        little-endian bits) restricts them to eligible rows inside the index."""
        faiss = _faiss()
        params = faiss.SearchParametersIVF()
        params.nprobe = min(nprobe, self.lists)
        if allowed is not None:
            selector = faiss.IDSelectorBitmap(len(allowed), faiss.swig_ptr(allowed))
            params.sel = selector
        _, found = self.index.search(np.ascontiguousarray(q.reshape(1, -1), dtype=np.float32), fetch,
                                     params=params)
        ids = found[0]
        return ids[ids >= 0]  # type: ignore[no-any-return]

    def save(self, path: Path) -> None:
        faiss = _faiss()
        faiss.write_index(self.index, str(path))

    @classmethod
    def load(cls, path: Path, built_for: int) -> Ann:
        faiss = _faiss()
        faiss.omp_set_num_threads(1)
        index = faiss.read_index(str(path))
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # rebuilt from the lists if the file lacks it
        return cls(index, built_for)


def bitmap(rowids: np.ndarray) -> np.ndarray:
    """A selector bitmap of these rowids (bit r set for rowid r, little-endian within each byte)."""
    if not len(rowids):
        return np.zeros(1, np.uint8)
    bits = np.zeros(int(rowids.max()) + 1, bool)
    bits[rowids] = True
    return np.packbits(bits, bitorder="little")


def _faiss() -> Any:
    """faiss, imported on first use: a process with only small KBs never loads it."""
    return importlib.import_module("faiss")
