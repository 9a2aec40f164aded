"""The embedded engine's background-indexing queue: a table in the same database, drained by a server thread."""

from __future__ import annotations

import json
import threading

from agentkb.adapters.embedded.sqlite.catalog import check_revision
from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.models.domain import Document

register_schema("indexing", """
CREATE TABLE IF NOT EXISTS pending_documents (
    document_id TEXT PRIMARY KEY, knowledge_base_id TEXT NOT NULL, workspace_id TEXT NOT NULL,
    enqueued_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ')));
""", columns={"pending_documents": ("page_starts TEXT",)})  # issue 28: a PDF upload's page offsets (JSON)

wakeup = threading.Event()  # set on enqueue: the worker of this process starts at once instead of at its next poll


class SqliteIndexingQueue:
    """IndexingQueue port: the record and the queue entry are written in one transaction (both or neither)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def enqueue(self, document: Document, replaces: int | None = None, page_starts: tuple[int, ...] = ()) -> None:
        with self.db.transaction() as conn:
            check_revision(conn, document, replaces)
            conn.execute(
                "INSERT INTO documents (id, knowledge_base_id, workspace_id, name, source_url, content_hash, tags,"
                " chunk_count, token_count, created_at, revision, source_path, status, error, content)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'indexing', NULL, ?)"
                " ON CONFLICT(id) DO UPDATE SET source_url=excluded.source_url, content_hash=excluded.content_hash,"
                " tags=excluded.tags, source_path=excluded.source_path, status='indexing', error=NULL,"
                " content=excluded.content, revision=excluded.revision",
                (document.id, document.knowledge_base_id, document.workspace_id, document.name, document.source_url,
                 document.content_hash, json.dumps(document.tags), document.chunk_count, document.token_count,
                 document.created_at, document.revision, document.source_path, document.content))
            conn.execute("INSERT OR REPLACE INTO pending_documents (document_id, knowledge_base_id, workspace_id,"
                         " page_starts) VALUES (?, ?, ?, ?)", (document.id, document.knowledge_base_id,
                                                               document.workspace_id,
                                                               json.dumps(page_starts) if page_starts else None))
        wakeup.set()

    def done(self, document: Document, error: str | None = None) -> None:
        with self.db.transaction() as conn:
            # One entry per document: a later revision queued meanwhile keeps it (the worker indexes that one next)
            conn.execute("DELETE FROM pending_documents WHERE document_id = ? AND NOT EXISTS (SELECT 1 FROM documents"
                         " WHERE id = ? AND status = 'indexing' AND revision > ?)",
                         (document.id, document.id, document.revision))
            if error is not None:
                conn.execute("UPDATE documents SET status = 'failed', error = ? WHERE id = ? AND status = 'indexing'"
                             " AND revision = ?", (error, document.id, document.revision))

    def pending(self) -> list[tuple[str, str, str, tuple[int, ...]]]:
        """(workspace, knowledge base, document, page starts) of every queued document, oldest first."""
        rows = self.db.connection().execute("SELECT workspace_id, knowledge_base_id, document_id, page_starts FROM"
                                            " pending_documents ORDER BY enqueued_at")
        return [(r[0], r[1], r[2], tuple(json.loads(r[3])) if r[3] else ()) for r in rows]
