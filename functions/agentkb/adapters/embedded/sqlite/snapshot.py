"""Embedded snapshot store: the exact response bytes per snapshot id, first writer wins."""

from __future__ import annotations

import sqlite3

from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.models.snapshot import StoredSnapshot

register_schema("snapshots", """
CREATE TABLE IF NOT EXISTS snapshots (
    snapshot_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, run_id TEXT NOT NULL, attempt_id TEXT NOT NULL,
    request_hash TEXT NOT NULL, body BLOB NOT NULL, created_at TEXT NOT NULL,
    UNIQUE (workspace_id, run_id, attempt_id));
""")


def _snapshot(row: sqlite3.Row) -> StoredSnapshot:
    return StoredSnapshot(row["snapshot_id"], row["workspace_id"], row["run_id"], row["attempt_id"],
                          row["request_hash"], bytes(row["body"]), row["created_at"])


class SqliteSnapshotStore:
    """SnapshotStore port on the embedded database (the same file as the catalog, so KB versions are local)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, snapshot_id: str) -> StoredSnapshot | None:
        row = self.db.connection().execute("SELECT * FROM snapshots WHERE snapshot_id = ?",
                                           (snapshot_id,)).fetchone()
        return _snapshot(row) if row else None

    def put_if_absent(self, snapshot: StoredSnapshot) -> StoredSnapshot:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO snapshots (snapshot_id, workspace_id, run_id, attempt_id, request_hash, body,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (snapshot.snapshot_id, snapshot.workspace_id, snapshot.run_id, snapshot.attempt_id,
                 snapshot.request_hash, snapshot.body, snapshot.created_at))
            row = conn.execute("SELECT * FROM snapshots WHERE snapshot_id = ?", (snapshot.snapshot_id,)).fetchone()
        return _snapshot(row)

    def index_version(self, knowledge_base_id: str) -> int | None:
        row = self.db.connection().execute("SELECT version FROM knowledge_bases WHERE id = ?",
                                           (knowledge_base_id,)).fetchone()
        return int(row["version"]) if row else None
