"""The embedded lexical legs: per knowledge base, tantivy BM25 indexes beside SQLite, one over chunks and one over
whole documents (lexical/directory.py: where they live).

SQLite stays the source of truth. Triggers log every chunk insert and delete in `lexical_log` (document and KB),
inside the transaction that writes the chunk. Each index keeps the log sequence it has applied in a stamp record
committed atomically with its changes. Before a search, a KB whose log has entries past its stamp re-indexes the
changed documents from what SQLite holds now (delete by document id, then add): replaying is idempotent, so a
crash between the two stores never loses or duplicates a document. A missing, unreadable or unstamped index is
rebuilt from SQLite. BM25 statistics are the KB's own (README Decisions).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import agentkb.adapters.embedded.sqlite.catalog  # noqa: F401  (the chunks table must exist before its triggers)
from agentkb.adapters.embedded.lexical import directory
from agentkb.adapters.embedded.lexical.records import CHUNK_ROWS, chunk_records, document_records
from agentkb.adapters.embedded.lexical.stamped import StampedIndex
from agentkb.adapters.embedded.lexical.text import query_terms
from agentkb.adapters.embedded.sqlite.db import Database, register_schema


def _migrate(db: Database) -> None:
    """Entries of the v3 log name no KB: the shared index they fed is gone (its directory is deleted), so every KB's
    pair is rebuilt from SQLite and those entries mean nothing."""
    conn = db.connection()
    conn.execute("DELETE FROM lexical_log WHERE knowledge_base_id IS NULL")
    conn.execute("CREATE INDEX IF NOT EXISTS lexical_log_kb ON lexical_log (knowledge_base_id, seq)")


register_schema("lexical", """
CREATE TABLE IF NOT EXISTS lexical_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, document_id TEXT NOT NULL,
    knowledge_base_id TEXT);
DROP TRIGGER IF EXISTS chunks_lexical_ai;
DROP TRIGGER IF EXISTS chunks_lexical_ad;
CREATE TRIGGER IF NOT EXISTS chunks_lexical_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO lexical_log (document_id, knowledge_base_id) VALUES (new.document_id, new.knowledge_base_id); END;
CREATE TRIGGER IF NOT EXISTS chunks_lexical_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO lexical_log (document_id, knowledge_base_id) VALUES (old.document_id, old.knowledge_base_id); END;
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TABLE IF EXISTS chunks_fts;
""", columns={"lexical_log": ("knowledge_base_id TEXT",)}, migrate=_migrate)

INSERT_TRIGGER = "chunks_lexical_insert"  # the bulk path (sqlite/bulk_load.py) suspends it and calls log_documents
PAGE = 5_000  # changed documents re-read per query (SQLite limits the variables of one statement to 32,766)


def log_documents(conn: sqlite3.Connection, kb_id: str, document_ids: Sequence[str]) -> None:
    """What INSERT_TRIGGER logs for documents whose chunks a bulk load wrote: one entry per document, not per chunk
    (a catch-up re-indexes a logged document whole)."""
    conn.executemany("INSERT INTO lexical_log (document_id, knowledge_base_id) VALUES (?, ?)",
                     [(d, kb_id) for d in document_ids])


class KbIndexes:
    """One KB's chunk and document indexes, and the log sequence this process last saw them at."""

    def __init__(self, path: Path) -> None:
        self.chunks = StampedIndex(path / "chunks")
        self.documents = StampedIndex(path / "documents")
        self.applied: int | None = None
        self.lock = threading.Lock()


class LexicalIndexes:
    """The BM25 indexes of every KB of one embedded database, each KB's caught up with its log at its use."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.root = directory.root_of(db.path)
        self._kbs: dict[str, KbIndexes] = {}
        self._lock = threading.Lock()

    def of(self, kb_id: str) -> KbIndexes:
        """The KB's pair, opened at first use."""
        kb = self._kbs.get(kb_id)
        if kb is None:
            with self._lock:
                kb = self._kbs.get(kb_id)
                if kb is None:
                    kb = self._kbs[kb_id] = KbIndexes(directory.kb_dir(self.root, kb_id))
        return kb

    def forget(self, kb_id: str) -> None:
        """A deleted KB: close and delete its indexes and forget its log entries."""
        with self._lock:
            self._kbs.pop(kb_id, None)
            directory.forget(self.root, kb_id)
        self.db.connection().execute("DELETE FROM lexical_log WHERE knowledge_base_id = ?", (kb_id,))

    def refresh(self, kb_id: str) -> None:
        """Catch the KB's two indexes up with SQLite (cheap when nothing changed: one indexed read)."""
        conn = self.db.connection()
        kb = self.of(kb_id)
        if kb.applied is not None and not _behind(conn, kb_id, kb.applied):
            return
        with kb.lock:
            kb.chunks.index.reload()
            kb.documents.index.reload()
            stamps = (kb.chunks.stamp(), kb.documents.stamp())
            conn.execute("BEGIN")  # one consistent snapshot of the log and the chunks
            try:
                head = _head(conn)
                for target, stamp, level in ((kb.chunks, stamps[0], "chunks"), (kb.documents, stamps[1], "documents")):
                    if stamp is None or stamp > head or _behind(conn, kb_id, stamp):
                        self._catch_up(conn, kb_id, target, stamp, head, level)
            finally:
                conn.execute("COMMIT")
            if conn.execute("SELECT 1 FROM lexical_log WHERE knowledge_base_id = ? AND seq <= ? LIMIT 1",
                            (kb_id, head)).fetchone():  # a write only after a write, never on a quiet read
                conn.execute("DELETE FROM lexical_log WHERE knowledge_base_id = ? AND seq <= ?", (kb_id, head))
            kb.applied = head  # both indexes hold every entry of the KB up to it

    def refresh_all(self) -> None:
        """Catch every KB of the database up (after a bulk load, or to count what the indexes hold)."""
        for row in self.db.connection().execute("SELECT id FROM knowledge_bases").fetchall():
            self.refresh(row[0])

    @staticmethod
    def _catch_up(conn: sqlite3.Connection, kb_id: str, target: StampedIndex, stamp: int | None, head: int,
                  level: str) -> None:
        records = chunk_records if level == "chunks" else document_records
        if stamp is None or stamp > head:  # never built, or built from another database file: rebuild the KB's
            target.apply(head, [([], records(conn.execute(CHUNK_ROWS.format(extra=""), (kb_id,))))], rebuild=True)
            return
        changed = [r[0] for r in conn.execute("SELECT DISTINCT document_id FROM lexical_log WHERE"
                                              " knowledge_base_id = ? AND seq > ? AND seq <= ?", (kb_id, stamp, head))]
        pages = (changed[i:i + PAGE] for i in range(0, len(changed), PAGE))
        target.apply(head, ((page, records(conn.execute(
            CHUNK_ROWS.format(extra=f"AND c.document_id IN ({','.join('?' * len(page))})"), (kb_id, *page))))
            for page in pages), rebuild=False)

    def search_chunks(self, kb_id: str, text: str, limit: int,
                      allowed_rowids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """(chunk rowid, BM25) of the KB's best chunks for the text, best first, ties by rowid."""
        terms = query_terms(text)
        if not terms or limit <= 0 or (allowed_rowids is not None and not allowed_rowids):
            return []
        self.refresh(kb_id)
        allowed = None if allowed_rowids is None else ("rowid", [int(r) for r in allowed_rowids])
        hits, searcher = self.of(kb_id).chunks.search(terms, allowed, limit)
        return _best_first(searcher, hits)

    def search_documents(self, kb_id: str, text: str, limit: int,
                         allowed_documents: Sequence[str] | None = None) -> list[tuple[int, float]]:
        """(rowid of the document's first chunk, BM25 over the whole document) of the KB's best documents, best
        first (a rowid, not the id: read from a fast field, no stored document is fetched)."""
        terms = query_terms(text)
        if not terms or limit <= 0 or (allowed_documents is not None and not allowed_documents):
            return []
        self.refresh(kb_id)
        allowed = None if allowed_documents is None else ("doc", list(allowed_documents))
        hits, searcher = self.of(kb_id).documents.search(terms, allowed, limit)
        return _best_first(searcher, hits)


def _head(conn: sqlite3.Connection) -> int:
    """The last sequence the log ever handed out (AUTOINCREMENT: never reused, even after pruning)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'lexical_log'").fetchone()
    return int(row[0]) if row else 0


def _behind(conn: sqlite3.Connection, kb_id: str, seq: int) -> bool:
    """Whether the log holds an entry of the KB past `seq`."""
    return conn.execute("SELECT 1 FROM lexical_log WHERE knowledge_base_id = ? AND seq > ? LIMIT 1",
                        (kb_id, seq)).fetchone() is not None


def _best_first(searcher: Any, hits: list[tuple[Any, float]]) -> list[tuple[int, float]]:
    """(rowid, score) best first, ties by rowid (tantivy breaks ties by its own addresses)."""
    rowids = searcher.fast_field_values("rowid", [a for a, _ in hits]) if hits else []
    ordered = sorted([(-score, int(rowid)) for rowid, (_, score) in zip(rowids, hits, strict=True)])
    return [(rowid, -negated) for negated, rowid in ordered]
