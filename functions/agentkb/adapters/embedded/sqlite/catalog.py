"""Embedded catalog: workspaces, knowledge bases, tag definitions and documents in SQLite."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence

from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.errors import Conflict, RevisionConflict
from agentkb.models.domain import Document, EmbeddingProfile, KnowledgeBase, TagDefinition
from agentkb.paging import decode_cursor, encode_cursor, is_string_pair

_TAG_COLUMNS = ", ".join(
    [f"text{i} TEXT" for i in range(1, 8)] + [f"number{i} REAL" for i in range(1, 6)]
    + [f"date{i} TEXT" for i in range(1, 3)] + [f"boolean{i} INTEGER" for i in range(1, 4)])


def _index_source_paths(db: Database) -> None:
    """Bulk ingest finds a file's document by its source path; after the columns, so older files have it."""
    db.connection().execute(
        "CREATE INDEX IF NOT EXISTS documents_source_path ON documents (knowledge_base_id, source_path)")


register_schema("knowledge", f"""
CREATE TABLE IF NOT EXISTS workspaces (
    id TEXT PRIMARY KEY, search_mode TEXT, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ')));
CREATE TABLE IF NOT EXISTS knowledge_bases (
    id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, name TEXT NOT NULL, description TEXT,
    embedding_model TEXT NOT NULL, embedding_dimension INTEGER NOT NULL, tag_definitions TEXT NOT NULL,
    created_at TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0, UNIQUE (workspace_id, name));
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, knowledge_base_id TEXT NOT NULL REFERENCES knowledge_bases(id),
    workspace_id TEXT NOT NULL, name TEXT NOT NULL, source_url TEXT, content_hash TEXT NOT NULL,
    tags TEXT NOT NULL, chunk_count INTEGER NOT NULL, token_count INTEGER NOT NULL, created_at TEXT NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1, UNIQUE (knowledge_base_id, name));
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, workspace_id TEXT NOT NULL,
    knowledge_base_id TEXT NOT NULL, document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    chunk_index INTEGER NOT NULL, content TEXT NOT NULL, token_count INTEGER NOT NULL, content_hash TEXT NOT NULL,
    embedding BLOB, {_TAG_COLUMNS});
CREATE INDEX IF NOT EXISTS chunks_kb ON chunks (knowledge_base_id, rowid);
CREATE INDEX IF NOT EXISTS chunks_document ON chunks (document_id);
""", columns={
    # issue 16: where a document came from, its indexing status and its text (GET document shows it)
    "documents": ("source_path TEXT", "status TEXT NOT NULL DEFAULT 'ready'", "error TEXT", "content TEXT",
                  "secret_chunks TEXT"),  # issue 23: JSON chunk indexes with a detected secret; NULL: never scanned
    "chunks": ("pages TEXT", "context TEXT NOT NULL DEFAULT ''",  # context: issue 17 (title, headings)
               "secret INTEGER"),  # issue 23: 1 when a secret was detected, 0 clean, NULL stored before scanning
    "knowledge_bases": ("secret_policy TEXT NOT NULL DEFAULT 'flag'",),
}, migrate=_index_source_paths)


_SQL_VARIABLES = 500  # per IN (...) list: well below SQLite's limit of host parameters


# By the primary key: `+` keeps SQLite off the KB's indexes, which it picks for a long id list (a scan of every
# document of the KB per read: a 1M-chunk import's read-back took 190 s instead of 8).
CONTENTS_OF_DOCUMENTS = ("SELECT id, content FROM documents WHERE +knowledge_base_id = ? AND content IS NOT NULL"
                         " AND id IN (SELECT value FROM json_each(?))")

# Every document column but its text: registry reads stay small however big the documents are.
DOCUMENT_COLUMNS = ("id, knowledge_base_id, workspace_id, name, source_url, content_hash, tags, chunk_count,"
                    " token_count, created_at, revision, source_path, status, error, secret_chunks")


def _kb(row: sqlite3.Row) -> KnowledgeBase:
    tags = tuple(TagDefinition(t["tagName"], t["fieldType"], t["slot"]) for t in json.loads(row["tag_definitions"]))
    return KnowledgeBase(row["id"], row["workspace_id"], row["name"], row["description"],
                         EmbeddingProfile(row["embedding_model"], row["embedding_dimension"]), tags, row["created_at"],
                         row["secret_policy"])


def document_from_row(row: sqlite3.Row) -> Document:
    """A row of DOCUMENT_COLUMNS, by position (by name: ~0.5 s more in an export of 250k documents)."""
    (doc_id, kb_id, ws, name, source_url, content_hash, tags, chunk_count, token_count, created_at, revision,
     source_path, status, error, secret) = row
    return Document(doc_id, kb_id, ws, name, source_url, content_hash, json.loads(tags) if tags != "{}" else {},
                    chunk_count, token_count, created_at, revision, source_path, status, error,
                    secret_chunks=_indexes(secret))


def _indexes(stored: str | None) -> tuple[int, ...] | None:
    return tuple(json.loads(stored)) if stored is not None else None


def check_revision(conn: sqlite3.Connection, document: Document, replaces: int | None,
                   profile: EmbeddingProfile | None = None) -> None:
    """In a write transaction (BEGIN IMMEDIATE: no other writer between this read and the write): RevisionConflict
    unless the document's name is at revision `replaces` (0: free; None: any) and held by this document; Conflict
    when the KB is no longer on `profile`, the one its chunks were embedded for (a reindex switched it since)."""
    if profile is not None:
        kb = conn.execute("SELECT embedding_model, embedding_dimension FROM knowledge_bases WHERE id = ?",
                          (document.knowledge_base_id,)).fetchone()
        if kb is not None and EmbeddingProfile(kb[0], int(kb[1])) != profile:
            raise Conflict("The knowledge base was switched to another embedding profile while this document was "
                           "embedded: send it again", details={"embeddingModel": kb[0], "dimension": int(kb[1])})
    row = conn.execute("SELECT id, revision FROM documents WHERE knowledge_base_id = ? AND name = ?",
                       (document.knowledge_base_id, document.name)).fetchone()
    holder, current = (row[0], row[1]) if row else (None, 0)
    if holder not in (None, document.id) or (replaces is not None and current != replaces):
        raise RevisionConflict(current, holder)


class SqliteCatalog:
    """Catalog port on the embedded database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def ensure_workspace(self, workspace_id: str) -> None:
        self.db.connection().execute("INSERT OR IGNORE INTO workspaces (id) VALUES (?)", (workspace_id,))

    def set_workspace_search_mode(self, workspace_id: str, mode: str | None) -> None:
        self.ensure_workspace(workspace_id)
        self.db.connection().execute("UPDATE workspaces SET search_mode = ? WHERE id = ?", (mode, workspace_id))

    def workspace_search_mode(self, workspace_id: str) -> str | None:
        row = self.db.connection().execute("SELECT search_mode FROM workspaces WHERE id = ?",
                                           (workspace_id,)).fetchone()
        return row["search_mode"] if row else None

    def create_knowledge_base(self, kb: KnowledgeBase) -> None:
        tags = json.dumps([{"tagName": t.tag_name, "fieldType": t.field_type, "slot": t.slot}
                           for t in kb.tag_definitions])
        try:
            with self.db.transaction() as conn:
                conn.execute("INSERT OR IGNORE INTO workspaces (id) VALUES (?)", (kb.workspace_id,))
                conn.execute(
                    "INSERT INTO knowledge_bases (id, workspace_id, name, description, embedding_model,"
                    " embedding_dimension, tag_definitions, created_at, secret_policy)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (kb.id, kb.workspace_id, kb.name, kb.description, kb.profile.model, kb.profile.dimension, tags,
                     kb.created_at, kb.secret_policy))
        except sqlite3.IntegrityError as exc:  # a concurrent create took the name: the DynamoDB catalog's answer
            if "knowledge_bases.workspace_id, knowledge_bases.name" not in str(exc):
                raise
            raise Conflict("A knowledge base with this name already exists in the workspace") from exc

    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None:
        row = self.db.connection().execute(
            "SELECT * FROM knowledge_bases WHERE id = ? AND workspace_id = ?", (kb_id, workspace_id)).fetchone()
        return _kb(row) if row else None

    def find_knowledge_base_by_name(self, workspace_id: str, name: str) -> KnowledgeBase | None:
        row = self.db.connection().execute(
            "SELECT * FROM knowledge_bases WHERE workspace_id = ? AND name = ?", (workspace_id, name)).fetchone()
        return _kb(row) if row else None

    def list_knowledge_bases(self, workspace_id: str) -> list[KnowledgeBase]:
        rows = self.db.connection().execute(
            "SELECT * FROM knowledge_bases WHERE workspace_id = ? ORDER BY name, id", (workspace_id,)).fetchall()
        return [_kb(r) for r in rows]

    def get_document(self, kb_id: str, document_id: str) -> Document | None:
        row = self.db.connection().execute(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = ? AND knowledge_base_id = ?",
            (document_id, kb_id)).fetchone()
        return document_from_row(row) if row else None

    def find_document_by_name(self, kb_id: str, name: str) -> Document | None:
        row = self.db.connection().execute(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE knowledge_base_id = ? AND name = ?",
            (kb_id, name)).fetchone()
        return document_from_row(row) if row else None

    def find_documents_by_source_path(self, kb_id: str, source_paths: Collection[str]) -> list[Document]:
        paths = sorted(set(source_paths))
        found: list[Document] = []
        for start in range(0, len(paths), _SQL_VARIABLES):
            batch = paths[start:start + _SQL_VARIABLES]
            found.extend(document_from_row(r) for r in self.db.connection().execute(
                f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE knowledge_base_id = ? AND source_path IN"
                f" ({', '.join('?' * len(batch))})", (kb_id, *batch)))
        return sorted(found, key=lambda d: (d.created_at, d.id))

    def list_documents(self, kb_id: str, limit: int, cursor: str | None = None) -> tuple[list[Document], str | None]:
        """A page of the KB's documents by name; the cursor holds the last (name, id) shown."""
        after = decode_cursor(cursor, is_string_pair) if cursor else ["", ""]
        rows = self.db.connection().execute(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE knowledge_base_id = ? AND (name, id) > (?, ?)"
            " ORDER BY name, id LIMIT ?", (kb_id, after[0], after[1], limit + 1)).fetchall()
        page = [document_from_row(r) for r in rows[:limit]]
        return page, encode_cursor([page[-1].name, page[-1].id]) if len(rows) > limit else None

    def document_content(self, kb_id: str, document_id: str) -> str | None:
        row = self.db.connection().execute("SELECT content FROM documents WHERE id = ? AND knowledge_base_id = ?",
                                           (document_id, kb_id)).fetchone()
        return row["content"] if row else None

    def document_contents(self, kb_id: str, document_ids: Sequence[str]) -> dict[str, str]:
        return {r[0]: r[1] for r in self.db.connection().execute(CONTENTS_OF_DOCUMENTS,
                                                                 (kb_id, json.dumps(list(document_ids))))}

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """The KB and its document registry, in one transaction (the index removed the chunks first)."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM chunks WHERE knowledge_base_id = ?", (kb.id,))  # any a crash left behind
            conn.execute("DELETE FROM documents WHERE knowledge_base_id = ?", (kb.id,))
            conn.execute("DELETE FROM knowledge_bases WHERE id = ? AND workspace_id = ?", (kb.id, kb.workspace_id))
