"""Embedded memory store: memory revisions, FTS5, vectors, memory<->entity links, listing, in-place changes, deletes.

The recall legs live in sqlite_memory_recall.py. OB1 fields ride along in `memory_annotations` (labels a listing
filters on, any extra JSON): a side table, so data directories written before it existed open unchanged.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.adapters.embedded.sqlite.memory.details import (
    OWNER_RULE,
    delete_memory,
    detail_sql,
    list_sql,
    migrate_name_keys,
    to_detail,
    update_memory,
)
from agentkb.adapters.embedded.sqlite.memory.recall import SqliteMemoryRecall
from agentkb.errors import Conflict
from agentkb.models.memory.api import VISIBILITY_RANK, IdempotencyRecord, MemoryRecord, StoredMemory
from agentkb.models.memory.detail import MemoryChange, MemoryDetail, MemoryListQuery, MemoryPage

register_schema("memory", """
CREATE TABLE IF NOT EXISTS memories (
  id INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL, project_id TEXT, visibility TEXT NOT NULL,
  vis_rank INTEGER NOT NULL, owner_id TEXT, channel_id TEXT, type TEXT NOT NULL, name TEXT NOT NULL,
  description TEXT NOT NULL, body TEXT NOT NULL, confirmed INTEGER NOT NULL, stale INTEGER NOT NULL,
  superseded INTEGER NOT NULL DEFAULT 0, supersedes INTEGER, revision INTEGER NOT NULL, valid_until REAL,
  sensitivity INTEGER NOT NULL, source TEXT, request_hash TEXT NOT NULL, created_at TEXT NOT NULL,
  updated_at REAL NOT NULL, entity_ids TEXT NOT NULL, relation_count INTEGER NOT NULL, name_key TEXT,
  occurred_at TEXT);
CREATE INDEX IF NOT EXISTS memories_eligibility ON memories (workspace_id, vis_rank, superseded, stale, confirmed,
  sensitivity, valid_until, updated_at, project_id, channel_id, owner_id);
CREATE TABLE IF NOT EXISTS memory_vectors (id INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL, embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS memory_vectors_ws ON memory_vectors (workspace_id, id);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
  name, description, body, content='memories', content_rowid='id', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, name, description, body) VALUES (new.id, new.name, new.description, new.body); END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, name, description, body)
  VALUES ('delete', old.id, old.name, old.description, old.body); END;
CREATE TABLE IF NOT EXISTS memory_entities (
  workspace_id TEXT NOT NULL, entity_id TEXT NOT NULL, memory_id INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, entity_id, memory_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_entities_memory ON memory_entities (memory_id, entity_id);
CREATE TABLE IF NOT EXISTS memory_idempotency (
  workspace_id TEXT NOT NULL, principal TEXT NOT NULL, key TEXT NOT NULL, body_hash TEXT NOT NULL,
  memory_id INTEGER NOT NULL, PRIMARY KEY (workspace_id, principal, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_meta (workspace_id TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS memory_rewrites (workspace_id TEXT PRIMARY KEY, rewrites INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS memory_annotations (
  id INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL, labels TEXT NOT NULL, extra TEXT NOT NULL);
""", columns={"memories": ("name_key TEXT", "occurred_at TEXT")}, migrate=migrate_name_keys)

_SUMMARY = ("id, name, revision, workspace_id, project_id, type, visibility, supersedes, entity_ids, relation_count,"
            " created_at, request_hash")


def _summary(row: sqlite3.Row) -> StoredMemory:
    response = {"memory_id": row["id"], "name": row["name"], "revision": row["revision"],
                "workspace_id": row["workspace_id"], "project_id": row["project_id"], "type": row["type"],
                "visibility": row["visibility"], "supersedes": row["supersedes"],
                "entity_ids": json.loads(row["entity_ids"]), "relation_count": row["relation_count"],
                "created_at": row["created_at"]}
    return StoredMemory(row["id"], row["name"], row["revision"], row["request_hash"], response)


class SqliteMemoryStore(SqliteMemoryRecall):
    """MemoryStore port on the embedded database."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)

    def find_live(self, workspace_id: str, key: str) -> StoredMemory | None:
        row = self.db.connection().execute(f"SELECT {_SUMMARY} FROM memories WHERE workspace_id = ? AND name_key = ?"
                                           " AND superseded = 0", (workspace_id, key)).fetchone()
        return _summary(row) if row else None

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        row = self.db.connection().execute(
            f"SELECT i.body_hash, {', '.join('m.' + c.strip() for c in _SUMMARY.split(','))} FROM memory_idempotency i"
            " JOIN memories m ON m.id = i.memory_id WHERE i.workspace_id = ? AND i.principal = ? AND i.key = ?",
            (workspace_id, principal, key)).fetchone()
        return (row["body_hash"], _summary(row)) if row else None

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        """Store a new revision atomically: supersede the live one of the same name, link entities, bump version."""
        try:
            with self.db.transaction() as conn:
                if idempotency is not None:
                    self._check_key(conn, record.workspace_id, idempotency)
                new_id = self._insert_rows(conn, [record], supersede=True)[0]
                if idempotency is not None:
                    conn.execute("INSERT INTO memory_idempotency VALUES (?, ?, ?, ?, ?)",
                                 (record.workspace_id, idempotency.principal, idempotency.key,
                                  idempotency.body_hash, new_id))
                row = conn.execute(f"SELECT {_SUMMARY} FROM memories WHERE id = ?", (new_id,)).fetchone()
        except sqlite3.IntegrityError as exc:  # a concurrent writer took the same name or key first
            raise Conflict("A concurrent write to the same memory name or idempotency key won; retry") from exc
        return _summary(row)

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Bulk load of new names (benchmarks, imports): one transaction, no supersede lookups."""
        with self.db.transaction() as conn:
            return self._insert_rows(conn, records, supersede=False)

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        """New names only, all or nothing: a name that is taken already fails the whole batch with Conflict."""
        try:
            with self.db.transaction() as conn:
                ids = self._insert_rows(conn, records, supersede=False)
                rows = [conn.execute(f"SELECT {_SUMMARY} FROM memories WHERE id = ?", (i,)).fetchone() for i in ids]
        except sqlite3.IntegrityError as exc:
            raise Conflict("A memory of the same name exists already") from exc
        return [_summary(row) for row in rows]

    def get(self, workspace_id: str, memory_id: int, viewer: str | None = None) -> MemoryDetail | None:
        return self.get_many(workspace_id, [memory_id], viewer).get(memory_id)

    def get_many(self, workspace_id: str, memory_ids: Sequence[int],
                 viewer: str | None = None) -> dict[int, MemoryDetail]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        sql = f"{detail_sql()} WHERE m.workspace_id = ? AND m.id IN ({','.join('?' * len(ids))}) AND {OWNER_RULE}"
        rows = self.db.connection().execute(sql, (workspace_id, *ids, viewer, viewer))
        return {int(row["id"]): to_detail(row) for row in rows}

    def list_memories(self, query: MemoryListQuery) -> MemoryPage:
        sql, params = list_sql(query)
        items = [to_detail(r) for r in self.db.connection().execute(sql, params)]
        more = len(items) > query.limit
        items = items[:query.limit]
        return MemoryPage(items, items[-1].memory_id if more else None)

    def update(self, workspace_id: str, memory_id: int, change: MemoryChange) -> MemoryDetail | None:
        """Change one memory in place (one transaction); None when it does not exist."""
        try:
            with self.db.transaction() as conn:
                if not update_memory(conn, workspace_id, memory_id, change):
                    return None
        except sqlite3.IntegrityError as exc:  # its name is live in the namespace it would move to
            raise Conflict("A live memory of the same name exists in that namespace") from exc
        return self.get(workspace_id, memory_id)

    def delete(self, workspace_id: str, memory_id: int) -> list[int]:
        """Forget a memory: every revision of its name in its namespace (its chain), their vectors, FTS rows, entity
        links, keys, annotations."""
        with self.db.transaction() as conn:
            return delete_memory(conn, workspace_id, memory_id)

    @staticmethod
    def _check_key(conn: sqlite3.Connection, ws: str, idem: IdempotencyRecord) -> None:
        row = conn.execute("SELECT body_hash FROM memory_idempotency WHERE workspace_id = ? AND principal = ?"
                           " AND key = ?", (ws, idem.principal, idem.key)).fetchone()
        if row is not None:
            raise Conflict("This idempotency key was already used")

    @staticmethod
    def _insert_rows(conn: sqlite3.Connection, records: Sequence[MemoryRecord], supersede: bool) -> list[int]:
        ids: list[int] = []
        workspaces: set[str] = set()
        for r in records:
            previous = None
            if supersede:
                previous = conn.execute("SELECT id, revision FROM memories WHERE workspace_id = ? AND name_key = ?"
                                        " AND superseded = 0", (r.workspace_id, r.name_key)).fetchone()
                if previous is not None:
                    conn.execute("UPDATE memories SET superseded = 1 WHERE id = ?", (previous["id"],))
            cur = conn.execute(
                "INSERT INTO memories (workspace_id, project_id, visibility, vis_rank, owner_id, channel_id, type,"
                " name, description, body, confirmed, stale, supersedes, revision, valid_until, sensitivity, source,"
                " request_hash, created_at, updated_at, entity_ids, relation_count, name_key, occurred_at)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (r.workspace_id, r.project_id, r.visibility, VISIBILITY_RANK[r.visibility], r.owner_id, r.channel_id,
                 r.type, r.name, r.description, r.body, int(r.confirmed), int(r.stale),
                 previous["id"] if previous else None, previous["revision"] + 1 if previous else 1, r.valid_until,
                 r.sensitivity, r.source, r.request_hash, r.created_at, r.updated_at, json.dumps(list(r.entity_ids)),
                 r.relation_count, r.name_key, r.occurred_at))
            memory_id = int(cur.lastrowid or 0)
            ids.append(memory_id)
            workspaces.add(r.workspace_id)
            conn.execute("INSERT INTO memory_vectors (id, workspace_id, embedding) VALUES (?, ?, ?)",
                         (memory_id, r.workspace_id, np.asarray(r.embedding, dtype=np.float32).tobytes()))
            conn.executemany("INSERT OR IGNORE INTO memory_entities VALUES (?, ?, ?)",
                             [(r.workspace_id, e, memory_id) for e in r.entity_ids])
            if r.labels or r.extra:
                conn.execute("INSERT INTO memory_annotations VALUES (?, ?, ?, ?)",
                             (memory_id, r.workspace_id, json.dumps(dict(r.labels)), json.dumps(dict(r.extra))))
        conn.executemany("INSERT INTO memory_meta (workspace_id, version) VALUES (?, 1) ON CONFLICT (workspace_id)"
                         " DO UPDATE SET version = version + 1", [(w,) for w in sorted(workspaces)])
        return ids

