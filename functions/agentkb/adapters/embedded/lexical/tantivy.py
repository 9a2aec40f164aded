"""The embedded lexical legs: tantivy BM25 indexes beside SQLite, one over chunks and one over whole documents.

SQLite stays the source of truth. Triggers log every chunk insert and delete in `lexical_log`, inside the
transaction that writes the chunk. Each tantivy index keeps the log sequence it has applied in a stamp record
committed atomically with its changes. Before a search, an index that is behind the log re-indexes the changed
documents from what SQLite holds now (delete by document id, then add): replaying is idempotent, so a crash
between the two stores never loses or duplicates a document. A missing, unreadable or unstamped index is
rebuilt from SQLite.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import tantivy

import agentkb.adapters.embedded.sqlite.catalog  # noqa: F401  (the chunks table must exist before its triggers)
from agentkb.adapters.embedded.lexical.text import analyzer, query_terms
from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.errors import DependencyError
from agentkb.services.ingest.chunking import reassemble

register_schema("lexical", """
CREATE TABLE IF NOT EXISTS lexical_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, document_id TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS chunks_lexical_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO lexical_log (document_id) VALUES (new.document_id); END;
CREATE TRIGGER IF NOT EXISTS chunks_lexical_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO lexical_log (document_id) VALUES (old.document_id); END;
DROP TRIGGER IF EXISTS chunks_ai;
DROP TRIGGER IF EXISTS chunks_ad;
DROP TABLE IF EXISTS chunks_fts;
""")

INSERT_TRIGGER = "chunks_lexical_ai"  # the bulk path (sqlite/bulk_load.py) suspends it and calls log_documents
FORMAT = "v3"  # bump when the schema or the analyzer changes: a new directory is built from SQLite
STAMP = "\x00stamp"
WRITER_HEAP = 32_000_000
WRITER_WAIT_S = 30.0
_CHUNK_ROWS = ("SELECT c.rowid, c.document_id, c.knowledge_base_id, c.workspace_id, c.content, c.context"
               " FROM chunks c {where} ORDER BY c.document_id, c.chunk_index")


def _schema() -> Any:
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("rowid", indexed=True, fast=True)
    builder.add_unsigned_field("seq", stored=True)
    for name in ("doc", "kb", "ws"):
        builder.add_text_field(name, tokenizer_name="raw")
    builder.add_text_field("text", tokenizer_name="agentkb", index_option="freq")
    return builder.build()


def log_documents(conn: sqlite3.Connection, document_ids: Sequence[str]) -> None:
    """What INSERT_TRIGGER logs for documents whose chunks a bulk load wrote: one entry per document, not per chunk
    (a catch-up re-indexes a logged document whole)."""
    conn.executemany("INSERT INTO lexical_log (document_id) VALUES (?)", [(d,) for d in document_ids])


class _Tantivy:
    """One tantivy index directory (chunks or documents) and its applied log sequence."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.schema = _schema()
        self.index = self._open()

    def _open(self) -> Any:
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
        except (OSError, ValueError):  # unreadable or another format: SQLite can rebuild it
            shutil.rmtree(self.path, ignore_errors=True)
            self.path.mkdir(parents=True)
            index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
        index.register_tokenizer("agentkb", analyzer())
        index.config_reader(reload_policy="Manual")
        return index

    def stamp(self) -> int | None:
        """The log sequence this index has applied, as committed (None: never built)."""
        searcher = self.index.searcher()
        found = searcher.search(tantivy.Query.term_query(self.schema, "doc", STAMP), 1).hits
        return int(searcher.doc(found[0][1])["seq"][0]) if found else None

    def writer(self) -> Any:
        """The index writer; another process may be catching up: wait for it rather than fail."""
        deadline = time.monotonic() + WRITER_WAIT_S
        while True:
            try:
                return self.index.writer(WRITER_HEAP, 1)
            except ValueError as exc:
                if "LockBusy" not in str(exc) or time.monotonic() > deadline:
                    raise DependencyError("the lexical index is locked by another writer",
                                          code="lexical_index_locked") from exc
                time.sleep(0.05)

    def apply(self, seq: int, deleted: Iterable[str], added: Iterable[dict[str, Any]], rebuild: bool) -> None:
        writer = self.writer()
        try:
            if rebuild:
                writer.delete_all_documents()
            for document_id in deleted:
                writer.delete_documents_by_term("doc", document_id)
            for fields in added:
                writer.add_document(tantivy.Document.from_dict(fields, self.schema))
            writer.delete_documents_by_term("doc", STAMP)
            writer.add_document(tantivy.Document.from_dict({"doc": STAMP, "seq": seq}, self.schema))
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()  # releases the writer lock for other processes
        self.index.reload()

    def search(self, terms: Sequence[str], scope: Sequence[tuple[str, str]], allowed: tuple[str, list[Any]] | None,
               limit: int) -> tuple[list[tuple[Any, float]], Any]:
        """(address, BM25) of the best `limit` records matching any term inside the scope (and allowed set)."""
        should = [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "text", t)) for t in terms]
        must = [tantivy.Query.term_query(self.schema, field, value) for field, value in scope]
        if allowed is not None:
            must.append(tantivy.Query.term_set_query(self.schema, allowed[0], allowed[1]))
        query = tantivy.Query.boolean_query([
            (tantivy.Occur.Must, tantivy.Query.boolean_query(should)),
            *((tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)) for q in must)])
        searcher = self.index.searcher()
        hits = searcher.search(query, limit, count=False).hits
        return [(address, float(score)) for score, address in hits], searcher


class LexicalIndexes:
    """The chunk and document BM25 indexes of one embedded database, kept caught up with its log."""

    def __init__(self, db: Database) -> None:
        self.db = db
        root = db.path.parent / f"{db.path.name}.lexical" / FORMAT
        for stale in (p for p in root.parent.glob("*") if p.is_dir() and p.name != FORMAT):
            shutil.rmtree(stale, ignore_errors=True)  # an older format: this one is rebuilt from SQLite
        self.chunks = _Tantivy(root / "chunks")
        self.documents = _Tantivy(root / "documents")
        self._applied: int | None = None
        self._lock = threading.Lock()

    def _head(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'lexical_log'").fetchone()
        return int(row[0]) if row else 0

    def refresh(self) -> None:
        """Catch both indexes up with SQLite (cheap when nothing changed: one indexed read)."""
        conn = self.db.connection()
        if self._applied is not None and self._applied == self._head(conn):
            return
        with self._lock:
            self.chunks.index.reload()
            self.documents.index.reload()
            stamps = (self.chunks.stamp(), self.documents.stamp())
            conn.execute("BEGIN")  # one consistent snapshot of the log and the chunks
            try:
                head = self._head(conn)
                if stamps[0] != head or stamps[1] != head:
                    self._catch_up(conn, head, stamps)
            finally:
                conn.execute("COMMIT")
            self._prune(conn, head)
            self._applied = head

    def _catch_up(self, conn: sqlite3.Connection, head: int, stamps: tuple[int | None, int | None]) -> None:
        for target, stamp, level in ((self.chunks, stamps[0], "chunks"), (self.documents, stamps[1], "documents")):
            if stamp == head:
                continue
            if stamp is None or stamp > head:  # never built, or built from another database file
                changed, where, params = [], "", []
            else:
                changed = [r[0] for r in conn.execute(
                    "SELECT DISTINCT document_id FROM lexical_log WHERE seq > ? AND seq <= ?", (stamp, head))]
                if not changed:
                    target.apply(head, [], [], rebuild=False)
                    continue
                where, params = f"WHERE c.document_id IN ({','.join('?' * len(changed))})", changed
            rows = conn.execute(_CHUNK_ROWS.format(where=where), params)
            records = _chunk_records(rows) if level == "chunks" else _document_records(rows)
            target.apply(head, changed, records, rebuild=stamp is None or stamp > head)

    def _prune(self, conn: sqlite3.Connection, head: int) -> None:
        """Forget log entries both indexes have applied (a write only after a write, never on a quiet read)."""
        if conn.execute("SELECT 1 FROM lexical_log WHERE seq <= ? LIMIT 1", (head,)).fetchone():
            conn.execute("DELETE FROM lexical_log WHERE seq <= ?", (head,))

    def search_chunks(self, workspace_id: str, kb_id: str, text: str, limit: int,
                      allowed_rowids: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """(chunk rowid, BM25) of the KB's best chunks for the text, best first, ties by rowid."""
        terms = query_terms(text)
        if not terms or limit <= 0 or (allowed_rowids is not None and not allowed_rowids):
            return []
        self.refresh()
        allowed = None if allowed_rowids is None else ("rowid", [int(r) for r in allowed_rowids])
        hits, searcher = self.chunks.search(terms, (("kb", kb_id), ("ws", workspace_id)), allowed, limit)
        return _best_first(searcher, hits)

    def search_documents(self, workspace_id: str, kb_id: str, text: str, limit: int,
                         allowed_documents: Sequence[str] | None = None) -> list[tuple[int, float]]:
        """(rowid of the document's first chunk, BM25 over the whole document) of the KB's best documents, best
        first (a rowid, not the id: read from a fast field, no stored document is fetched)."""
        terms = query_terms(text)
        if not terms or limit <= 0 or (allowed_documents is not None and not allowed_documents):
            return []
        self.refresh()
        allowed = None if allowed_documents is None else ("doc", list(allowed_documents))
        hits, searcher = self.documents.search(terms, (("kb", kb_id), ("ws", workspace_id)), allowed, limit)
        return _best_first(searcher, hits)


def _best_first(searcher: Any, hits: list[tuple[Any, float]]) -> list[tuple[int, float]]:
    """(rowid, score) best first, ties by rowid (tantivy breaks ties by its own addresses)."""
    rowids = searcher.fast_field_values("rowid", [a for a, _ in hits]) if hits else []
    ordered = sorted([(-score, int(rowid)) for rowid, (_, score) in zip(rowids, hits, strict=True)])
    return [(rowid, -negated) for negated, rowid in ordered]


def _chunk_records(rows: Iterable[sqlite3.Row]) -> list[dict[str, Any]]:
    """A chunk is found by its words and by its context (the title and headings above it)."""
    return [{"rowid": r[0], "doc": r[1], "kb": r[2], "ws": r[3], "text": f"{r[5]}\n{r[4]}" if r[5] else r[4]}
            for r in rows]


def _document_records(rows: Iterable[sqlite3.Row]) -> list[dict[str, Any]]:
    """One record per document: its chunks put back together without their overlaps."""
    records: list[dict[str, Any]] = []
    current: list[Any] = []
    for row in rows:
        if current and current[0][1] != row[1]:
            records.append(_document_record(current))
            current = []
        current.append(row)
    if current:
        records.append(_document_record(current))
    return records


def _document_record(rows: list[Any]) -> dict[str, Any]:
    """A document's record: each distinct context once (title, headings), then its text without overlaps."""
    first = rows[0]
    contexts = "\n".join(dict.fromkeys(r[5] for r in rows if r[5]))
    text = reassemble([r[4] for r in rows])
    return {"rowid": first[0], "doc": first[1], "kb": first[2], "ws": first[3], "text": f"{contexts}\n{text}"}
