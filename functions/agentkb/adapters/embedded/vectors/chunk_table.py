"""Per knowledge base, in memory: every chunk's rowid, ids and float32 vector, caught up when the KB's version moves.

The legs score rowids (numpy or the approximate index for vectors, tantivy for BM25) and name their hits from this
table, so no leg reads SQLite rows on the hot path; only the final top-k is hydrated from SQLite.
A table is read whole once per process (page by page into contiguous arrays, vectors/changes.py); after that a
write costs the next search only its own rows, read back by rowid from the change log. A KB of THRESHOLD vectors
or more also gets an approximate index (vectors/ann.py), persisted beside SQLite and caught up the same way, and
keeps its vectors as float16 (vectors/rescore.py: the best hits are re-scored from SQLite's float32), saved beside
the index so that the next process reads them at disk speed (vectors/table_file.py).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agentkb.adapters.embedded.vectors import changes, table_file
from agentkb.adapters.embedded.vectors.ann import DROP_BELOW, THRESHOLD, Ann
from agentkb.adapters.embedded.vectors.ann_files import SAVE_EVERY, AnnFiles
from agentkb.adapters.embedded.vectors.store import ChunkTable, KbVectors

__all__ = ["ChunkTable", "ChunkTables"]
BULK_ROWS = 20_000  # rows changed at once above which (and above a quarter of the table) the KB is read whole


@dataclass
class _Kb:
    store: KbVectors
    seq: int  # the log sequence the store (and its index) reflect
    ann: Ann | None = None
    saved_seq: int = 0  # the stamp of the index's last persisted file
    unsaved: int = 0  # rows changed since
    table_saved: bool = False  # the store has a saved table file (vectors/table_file.py) no older than the index's


class ChunkTables:
    """The tables of every existing KB this process searched, checked against the KB version on each use."""

    def __init__(self, root: Path | None = None) -> None:
        self._tables: dict[str, ChunkTable] = {}
        self._kbs: dict[str, _Kb] = {}
        self._lock = threading.Lock()
        self.files = AnnFiles(root)

    def get(self, conn: sqlite3.Connection, kb_id: str, version: int | None = None) -> ChunkTable:
        """The KB's table at `version` (read from SQLite when the caller has not just read it)."""
        if version is None:
            row = conn.execute("SELECT version FROM knowledge_bases WHERE id = ?", (kb_id,)).fetchone()
            if row is None:  # deleted by another process, or never created: nothing to keep
                self.forget(kb_id)
                return KbVectors(changes.Rows.empty(1)).snapshot(-1, 0, None)
            version = int(row[0])
        cached = self._tables.get(kb_id)
        if cached is not None and cached.version == version:
            return cached
        with self._lock:
            cached = self._tables.get(kb_id)
            if cached is not None and cached.version == version:
                return cached
            table = self._tables[kb_id] = self._refresh(conn, kb_id)
        return table

    def cached(self, kb_id: str) -> bool:
        return kb_id in self._tables

    def forget(self, kb_id: str) -> None:
        """Drop a deleted KB's table and index (a server with KB churn would otherwise keep every one it searched)."""
        with self._lock:
            self._tables.pop(kb_id, None)
            self._kbs.pop(kb_id, None)
            self.files.drop(kb_id)

    def _refresh(self, conn: sqlite3.Connection, kb_id: str) -> ChunkTable:
        """Catch the KB up with SQLite in one read snapshot: its version, the log and the rows agree."""
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            row = conn.execute("SELECT version FROM knowledge_bases WHERE id = ?", (kb_id,)).fetchone()
            version = int(row[0]) if row else -1
            head = changes.head(conn)
            kb = self._kbs.get(kb_id)
            width = changes.width_of(conn, kb_id)
            if kb is None or kb.store.width != width or not changes.complete_since(conn, kb.seq):
                kb = self._kbs[kb_id] = self._load(conn, kb_id, width, head)
            elif kb.seq != head:
                self._apply(conn, kb_id, kb, changes.changed_rowids(conn, kb_id, kb.seq, head), head)
        finally:
            if own:
                conn.execute("COMMIT")
        self._index_policy(kb_id, kb)
        if own:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: the next catch-up prunes
                changes.prune(conn)
        return kb.store.snapshot(version, kb.seq, kb.ann)

    def _load(self, conn: sqlite3.Connection, kb_id: str, width: int, head: int) -> _Kb:
        saved = self._saved_table(conn, kb_id, width, head)
        kb = _Kb(saved or KbVectors(changes.read_rows(conn, kb_id, width, half_from=THRESHOLD)), head)
        kb.table_saved = saved is not None
        persisted = self.files.load(kb_id)
        if persisted is not None:
            ann, stamp = persisted
            if stamp <= head and changes.complete_since(conn, stamp):
                touched = changes.changed_rowids(conn, kb_id, stamp, head)
                self._reindex(kb, ann, touched)
                live = int(np.count_nonzero(kb.store.has_vector[:kb.store.n]))
                if len(ann) == live and ann.index.d == width:  # else: not this database's; rebuilt below
                    kb.ann, kb.saved_seq, kb.unsaved = ann, stamp, len(touched)
        return kb

    def _saved_table(self, conn: sqlite3.Connection, kb_id: str, width: int, head: int) -> KbVectors | None:
        """The KB's saved table caught up to `head`, if it is whole and, caught up, holds exactly SQLite's rows."""
        saved = table_file.load(self.files.folder(kb_id), width)
        if saved is None or saved[1] > head or not changes.complete_since(conn, saved[1]):
            return None
        store = KbVectors(saved[0])
        touched = changes.changed_rowids(conn, kb_id, saved[1], head)
        if len(touched):
            store.apply(touched, changes.read_rows(conn, kb_id, width, touched))
        live = store.live[:store.n]
        return store if table_file.matches(conn, kb_id, store.rowids[:store.n][live]) else None

    def _save_table(self, kb_id: str, kb: _Kb) -> None:
        folder, store = self.files.folder(kb_id), kb.store
        if folder is None:
            return
        keep = np.flatnonzero(store.live[:store.n])
        whole = len(keep) == store.n
        table_file.save(folder, kb.seq, store.rowids[keep], store.has_vector[keep],
                        store.vectors[:store.n] if whole else store.vectors[keep],
                        store.chunk_ids[:store.n] if whole else [store.chunk_ids[i] for i in keep.tolist()],
                        store.document_ids[:store.n] if whole else [store.document_ids[i] for i in keep.tolist()])
        kb.table_saved = True

    def _apply(self, conn: sqlite3.Connection, kb_id: str, kb: _Kb, touched: np.ndarray, head: int) -> None:
        if len(touched) > max(BULK_ROWS, kb.store.n // 4):  # a bulk write: one contiguous read beats lookups
            kb.store = KbVectors(changes.read_rows(conn, kb_id, kb.store.width, half_from=THRESHOLD))
        elif len(touched):
            kb.store.apply(touched, changes.read_rows(conn, kb_id, kb.store.width, touched))
        if len(touched) and kb.ann is not None:
            self._reindex(kb, kb.ann, touched)
            kb.unsaved += len(touched)
        kb.seq = head

    @staticmethod
    def _reindex(kb: _Kb, ann: Ann, touched: np.ndarray) -> None:
        """Bring the index's entries for `touched` to the store's rows (drop each, add back those with a vector)."""
        snapshot = kb.store.snapshot(0, 0, None)
        pos, found = snapshot.positions(touched)
        keep = found & snapshot.has_vector[pos]
        with ann.lock:
            ann.remove(touched)
            ann.add(touched[keep], snapshot.vectors[pos[keep]])

    def _index_policy(self, kb_id: str, kb: _Kb) -> None:
        """Build the index when the KB reaches THRESHOLD vectors (or outgrew its lists), drop it below DROP_BELOW,
        save it when it changed enough since its last file."""
        live = int(np.count_nonzero(kb.store.has_vector[:kb.store.n]))
        if kb.ann is not None and live < DROP_BELOW:
            kb.ann = None
            self.files.drop(kb_id)
            self._kbs.pop(kb_id, None)  # its next change reads it back as float32 for the exact scan
        elif live >= THRESHOLD and (kb.ann is None or kb.ann.outgrown(live)):
            kb.ann = Ann.build(*kb.store.live_vectors())
            kb.unsaved = SAVE_EVERY
        if kb.ann is not None:
            kb.store.halve()  # float16 from now on: the index's hits are re-scored from SQLite (vectors/rescore.py)
        if kb.ann is not None and kb.unsaved >= SAVE_EVERY:
            with kb.ann.lock:
                self.files.save(kb_id, kb.ann, kb.seq)
            kb.saved_seq, kb.unsaved, kb.table_saved = kb.seq, 0, False
        if kb.ann is not None and not kb.table_saved:
            self._save_table(kb_id, kb)
