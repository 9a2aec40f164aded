"""Embedded key store, rate limiter and key pepper; the embedding cache's table (code: sqlite_embedding_cache.py)."""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
from pathlib import Path

from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.errors import Conflict
from agentkb.models.domain import ApiKeyRecord, RateDecision

WINDOW_S = 60

register_schema("security", """
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY, key_hash TEXT NOT NULL, principal TEXT NOT NULL, workspaces TEXT NOT NULL,
    scopes TEXT NOT NULL, created_at TEXT NOT NULL, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS rate_windows (
    key_id TEXT NOT NULL, window_start INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY (key_id, window_start)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embedding_cache (
    profile TEXT NOT NULL, content_hash TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (profile, content_hash)) WITHOUT ROWID;
""")


class SqliteKeyStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def put_key(self, record: ApiKeyRecord) -> None:
        """Store a new key; an existing key id is never overwritten (Conflict, as on DynamoDB)."""
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO api_keys (key_id, key_hash, principal, workspaces, scopes, created_at, revoked)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (record.key_id, record.key_hash, record.principal, json.dumps(list(record.workspaces)),
                     json.dumps(list(record.scopes)), record.created_at, int(record.revoked)))
                conn.executemany("INSERT OR IGNORE INTO workspaces (id) VALUES (?)",
                                 [(w,) for w in record.workspaces if w != "*"])
        except sqlite3.IntegrityError as exc:
            if "api_keys.key_id" not in str(exc):
                raise
            raise Conflict("An API key with this id already exists") from exc

    def get_key(self, key_id: str) -> ApiKeyRecord | None:
        row = self.db.connection().execute("SELECT * FROM api_keys WHERE key_id = ?", (key_id,)).fetchone()
        return _key(row) if row else None

    def list_keys(self) -> list[ApiKeyRecord]:
        return [_key(r) for r in self.db.connection().execute("SELECT * FROM api_keys ORDER BY created_at, key_id")]

    def revoke_key(self, key_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("UPDATE api_keys SET revoked = 1 WHERE key_id = ?", (key_id,)).rowcount > 0

    def delete_key(self, key_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM api_keys WHERE key_id = ?", (key_id,)).rowcount > 0


def _key(row: sqlite3.Row) -> ApiKeyRecord:
    return ApiKeyRecord(row["key_id"], row["key_hash"], row["principal"], tuple(json.loads(row["workspaces"])),
                        tuple(json.loads(row["scopes"])), row["created_at"], bool(row["revoked"]))


class SqliteRateLimiter:
    """Fixed one-minute windows counted atomically in SQLite (shared by every local process)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def hit(self, key_id: str, limit: int, now: float) -> RateDecision:
        window = int(now) // WINDOW_S * WINDOW_S
        conn = self.db.connection()
        count = conn.execute(
            "INSERT INTO rate_windows (key_id, window_start, count) VALUES (?, ?, 1)"
            " ON CONFLICT(key_id, window_start) DO UPDATE SET count = count + 1 RETURNING count",
            (key_id, window)).fetchone()[0]
        if count == 1:  # first hit of a window: forget this key's old windows
            conn.execute("DELETE FROM rate_windows WHERE key_id = ? AND window_start < ?", (key_id, window))
        reset = window + WINDOW_S
        allowed = count <= limit
        return RateDecision(limit, max(0, limit - count), reset, allowed,
                            0 if allowed else max(1, reset - int(now)))


class FileSecretStore:
    """Local secrets port: a random pepper in <data-dir>/secrets/pepper (0600), created on first use.

    Created atomically (written to a private temp file, then hard-linked into place): racing threads or
    processes all end up reading the one complete pepper, never a partial or a second one.
    """

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / "secrets" / "pepper"
        self._pepper: bytes | None = None
        self._lock = threading.Lock()

    def key_pepper(self) -> bytes:
        if self._pepper is None:
            with self._lock:
                if self._pepper is None:
                    if not self.path.exists():
                        self._create()
                    self._pepper = self.path.read_bytes()
        return self._pepper

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(f".pepper.{os.getpid()}.{threading.get_ident()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
        try:
            os.link(tmp, self.path)  # atomic: fails if another writer got there first
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
