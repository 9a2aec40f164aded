"""The embedded index's bulk path (`agentkb import`, issue 26): many documents whose chunks carry their vectors, in
one transaction, without the per-row work of the change-log triggers.

Every chunk row otherwise fires two AFTER INSERT triggers (the vector log, one entry per chunk, and the lexical
log, one per chunk of a document): at bulk rates they cost more than the rows. Inside the batch's transaction
those two triggers are dropped, the rows go in with one `executemany`, the logs get what the triggers would have
written (the vector log in one INSERT ... SELECT over the rows appended, the lexical log one entry per document
instead of one per chunk) and the triggers are created again from their own stored SQL. DDL is transactional in
SQLite: a crash anywhere before COMMIT rolls back the rows, the log entries and the dropped triggers together,
and other connections never see the chunks table without its triggers (the batch holds the write lock, BEGIN
IMMEDIATE, until the triggers are back).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np

from agentkb.adapters.embedded.lexical import tantivy
from agentkb.adapters.embedded.vectors import changes
from agentkb.errors import Conflict, RevisionConflict
from agentkb.models.domain import Chunk, Document, KnowledgeBase

SUSPENDED = (changes.INSERT_TRIGGER, tantivy.INSERT_TRIGGER)  # what they log is written here, set-based
CACHE_KIB = 65_536  # page cache of a bulk-loading connection: the chunk indexes' random inserts (id, content hash)
# stay in memory well past 100k chunks instead of re-reading index pages (SQLite's default is 2 MB)
_DOCUMENTS = ("INSERT INTO documents (id, knowledge_base_id, workspace_id, name, source_url, content_hash, tags,"
              " chunk_count, token_count, created_at, revision, source_path, status, error, content, secret_chunks)"
              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
Items = Sequence[tuple[Document, Sequence[Chunk]]]


def vector_bytes(vector: Sequence[float] | np.ndarray | None) -> bytes | None:
    """A chunk's float32 vector as stored: a list from the embedder, an array('f') from an archive, or numpy's."""
    if vector is None or len(vector) == 0:
        return None
    if isinstance(vector, array) and vector.typecode == "f":  # what an import reads from an archive
        return vector.tobytes()
    if isinstance(vector, np.ndarray) and vector.dtype == np.float32:
        return vector.tobytes()
    return np.asarray(vector, dtype=np.float32).tobytes()


def chunk_sql(kb: KnowledgeBase) -> tuple[str, list[str]]:
    """The INSERT of a chunk row of this KB, and the tag slot columns it fills (in order)."""
    slots = [t.slot for t in kb.tag_definitions]
    columns = ["id", "workspace_id", "knowledge_base_id", "document_id", "chunk_index", "content", "token_count",
               "content_hash", "embedding", "pages", "context", "secret", *slots]
    return f"INSERT INTO chunks ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", slots


def chunk_rows(kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk]) -> list[tuple[Any, ...]]:
    values = [document.tags.get(t.tag_name) for t in kb.tag_definitions]
    slot_values = [int(v) if isinstance(v, bool) else v for v in values]
    return [(c.id, kb.workspace_id, kb.id, document.id, c.chunk_index, c.content, c.token_count, c.content_hash,
             vector_bytes(c.embedding), json.dumps(list(c.pages)) if c.pages else None, c.context, int(c.secret),
             *slot_values) for c in chunks]


def document_row(kb: KnowledgeBase, d: Document) -> tuple[Any, ...]:
    return (d.id, kb.id, kb.workspace_id, d.name, d.source_url, d.content_hash, json.dumps(d.tags), d.chunk_count,
            d.token_count, d.created_at, d.revision, d.source_path, d.status, d.error, d.content,
            None if d.secret_chunks is None else json.dumps(list(d.secret_chunks)))


def stored_documents(conn: sqlite3.Connection, kb_id: str, ids: Sequence[str]) -> set[str]:
    """Which of these document ids the KB holds already (they take the one-document path: replace). By the
    primary key (`+` keeps SQLite off the KB's index, which would scan every document of the KB per query)."""
    held: set[str] = set()
    for start in range(0, len(ids), 500):
        part = list(ids[start:start + 500])
        held.update(r[0] for r in conn.execute(
            f"SELECT id FROM documents WHERE +knowledge_base_id = ? AND id IN ({','.join('?' * len(part))})",
            (kb_id, *part)))
    return held


def _names_free(conn: sqlite3.Connection, kb_id: str, names: Sequence[str]) -> None:
    """RevisionConflict (as check_revision raises it) when another document of the KB holds one of these names."""
    for start in range(0, len(names), 500):
        part = list(names[start:start + 500])
        row = conn.execute(f"SELECT id, revision FROM documents WHERE knowledge_base_id = ? AND name IN"
                           f" ({','.join('?' * len(part))}) LIMIT 1", (kb_id, *part)).fetchone()
        if row is not None:
            raise RevisionConflict(int(row[1]), row[0])


def load_new(conn: sqlite3.Connection, kb: KnowledgeBase, items: Items) -> None:
    """Insert documents the database does not hold and their chunks, in the caller's write transaction, with the
    change logs written set-based (module docstring). A name another document holds: RevisionConflict; an id held
    already: Conflict; either way the caller's transaction rolls back (nothing of the batch is kept)."""
    if not items:
        return
    _names_free(conn, kb.id, [d.name for d, _ in items])
    if int(conn.execute("PRAGMA cache_size").fetchone()[0]) > -CACHE_KIB:
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")  # this connection's, for the rest of its life
    triggers = conn.execute(
        f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'chunks' AND name IN"
        f" ({','.join('?' * len(SUSPENDED))})", SUSPENDED).fetchall()
    before = conn.execute("SELECT coalesce(max(rowid), 0) FROM chunks").fetchone()[0]
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    sql, _ = chunk_sql(kb)
    try:
        conn.executemany(_DOCUMENTS, [document_row(kb, d) for d, _ in items])
        conn.executemany(sql, [row for d, chunks in items for row in chunk_rows(kb, d, chunks)])
    except sqlite3.IntegrityError as exc:  # the caller's transaction rolls back: rows and dropped triggers alike
        raise Conflict("A document or chunk id of the batch is held already (twice in the batch, or by another "
                       "knowledge base or workspace of this data dir); nothing of the batch was written") from exc
    changes.log_appended(conn, before)
    tantivy.log_documents(conn, kb.id, [d.id for d, chunks in items if chunks])
    for _, create in triggers:
        conn.execute(create)


class Checkpoints:
    """A bulk batch's WAL frames copied into the database file on a thread of its own while the importer reads the
    next batch. At SQLite's default the committing connection checkpoints every 1,000 pages itself (a 5,000-chunk
    batch writes ~3,700: a checkpoint in every commit, ~20% of the write phase). Around a batch the connection's
    automatic checkpoints are off; after its commit a PASSIVE checkpoint (never blocks a reader or the next writer)
    runs on the thread, in one call that holds no GIL. Crash-safe as any checkpoint: the WAL stays authoritative
    until a checkpoint completes; a process killed meanwhile leaves the frames for the next one.

    A checkpoint that runs while the next batch appends never finds the whole WAL copied, and SQLite starts the WAL
    over only then: unchecked, a 1M-chunk import left a 6.3 GB WAL. So every CATCH_UP_EVERY batches the writer waits
    (at most CATCH_UP_WAIT_S: a reader holding an old snapshot can keep any checkpoint from finishing) until the
    thread has copied every frame, and its next batch writes the WAL from its start. Seldom: a wait costs the
    checkpoint's last copy and fsync (~0.1 s at 1M chunks; waiting every 4 batches took 5.8 s of a 34 s write)."""

    CATCH_UP_EVERY, CATCH_UP_WAIT_S = 16, 5.0  # a WAL of ~600 MB at most at 1M chunks (bench.portability.bulk)

    def __init__(self, path: Path) -> None:
        self.path = path
        self._wanted, self._caught_up = threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        self._batches = 0
        self.done: tuple[int, int, int] | None = None  # the last checkpoint's (busy, WAL frames, frames copied)

    @contextmanager
    def deferred(self, conn: sqlite3.Connection) -> Iterator[None]:
        """No automatic checkpoint in this connection's commits inside; a background one after."""
        before = int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        try:
            yield
        finally:
            conn.execute(f"PRAGMA wal_autocheckpoint = {before}")
            self._request()
            self._batches += 1
            if self._batches % self.CATCH_UP_EVERY == 0:
                self._caught_up.wait(self.CATCH_UP_WAIT_S)

    def _request(self) -> None:
        self._caught_up.clear()
        self._wanted.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="agentkb-checkpoint", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        while self._wanted.wait():
            self._wanted.clear()
            with suppress(sqlite3.Error):  # best effort: the next automatic checkpoint copies what this did not
                busy, frames, copied = self.done = tuple(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())
                if not busy and frames == copied and not self._wanted.is_set():
                    self._caught_up.set()
