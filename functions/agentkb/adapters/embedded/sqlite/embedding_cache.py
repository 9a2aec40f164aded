"""The embedded engine's embedding cache: vectors by (profile, hash of the embedded text), and their reclamation.

A cache row is keyed by what was embedded: sha256 of a chunk's context line and content (`chunking.TextChunk.
embedding_text`), so identical text in any KB of the same profile shares one row. Nothing else points at it: a
chunk stores its own vector. The cache only saves model calls, so deleting a row is always safe for readers (a miss
recomputes); what must not happen is keeping rows forever after their text is gone (disk).
- Release on delete: the index's writes that drop chunks (document delete or replace, KB delete) pass the dropped
  chunks' (content, context) through `release_vectors` inside their own transaction; a row goes when no chunk of
  any KB still has that text (found by `SAME_TEXT`: a chunk's content_hash is sha256 of its content).
- Sweep (`agentkb kb sweep-cache`): rows no chunk references (left by a crash between embedding and the write,
  or by versions before the release) and older than SWEEP_GRACE_S, which spares vectors an ingest in flight
  embedded ahead of its write (bulk ingest prefetches whole groups).
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from array import array
from collections.abc import Iterable, Sequence

from agentkb.adapters.embedded.sqlite import catalog, security  # noqa: F401  (their tables come first)
from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.ports.embedding import CacheSweep

SWEEP_GRACE_S = 3600.0
PAGE = 500

# The chunks holding a text, by an index of each content hash's first 12 hex digits (48 bits: the full hash is
# compared on the few rows found). The index on the whole hash it replaces took 3.6x the space, and every chunk
# written inserts at a random place of it: at 1M chunks it cost a bulk import ~7 s of its write phase (dirty pages
# per commit), the prefix ~3 s (bench.portability.bulk). `+` keeps the planner off a scan for the hash itself.
SAME_TEXT = "substr(content_hash, 1, 12) = substr(?, 1, 12) AND +content_hash = ?"
register_schema("embedding_cache_refs", """
DROP INDEX IF EXISTS chunks_content_hash;
CREATE INDEX IF NOT EXISTS chunks_text_key ON chunks (substr(content_hash, 1, 12));
""", columns={"embedding_cache": ("created INTEGER NOT NULL DEFAULT 0",)})  # 0: rows from before (sweepable)


def vector_key(content: str, context: str) -> str:
    """The cache key of a chunk: sha256 of the text the model embedded (context line, then content)."""
    text = f"{context}\n{content}" if context else content
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def dropped_texts(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> set[tuple[str, str, str]]:
    """(content_hash, context, vector key) of the chunks a delete `WHERE <where>` is about to drop."""
    return {(row[0], row[1], vector_key(row[2], row[1])) for row in conn.execute(
        f"SELECT content_hash, context, content FROM chunks WHERE {where}", tuple(params))}


def release_vectors(conn: sqlite3.Connection, profile_key: str, dropped: Iterable[tuple[str, str, str]]) -> None:
    """Delete the cache rows of dropped chunks whose text no remaining chunk has (call after the delete, in the
    same transaction: a concurrent write of the same text either committed first and keeps the row, or comes
    later and recomputes)."""
    conn.executemany(
        "DELETE FROM embedding_cache WHERE profile = ? AND content_hash = ? AND NOT EXISTS"
        f" (SELECT 1 FROM chunks WHERE {SAME_TEXT} AND context = ?)",
        [(profile_key, key, content_hash, content_hash, context) for content_hash, context, key in dropped])


class SqliteEmbeddingCache:
    """EmbeddingCache port on the embedded database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get_many(self, profile_key: str, content_hashes: Sequence[str]) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        conn = self.db.connection()
        hashes = list(dict.fromkeys(content_hashes))
        for start in range(0, len(hashes), PAGE):
            part = hashes[start:start + PAGE]
            for row in conn.execute(
                    f"SELECT content_hash, vector FROM embedding_cache WHERE profile = ?"
                    f" AND content_hash IN ({','.join('?' * len(part))})", (profile_key, *part)):
                out[row[0]] = array("f", row[1]).tolist()  # float32, native order: as stored
        return out

    def put_many(self, profile_key: str, vectors: dict[str, list[float]]) -> None:
        now = int(time.time())
        with self.db.transaction() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache (profile, content_hash, vector, created) VALUES (?, ?, ?, ?)",
                [(profile_key, h, array("f", v).tobytes(), now) for h, v in vectors.items()])

    def sweep(self, now: float) -> CacheSweep:
        """Delete the rows no chunk references, older than SWEEP_GRACE_S (module docstring)."""
        conn = self.db.connection()
        live = {vector_key(r[0], r[1]) for r in conn.execute("SELECT content, context FROM chunks")}
        cutoff = int(now - SWEEP_GRACE_S)
        rows = conn.execute("SELECT profile, content_hash FROM embedding_cache WHERE created < ?", (cutoff,)).fetchall()
        doomed = [(profile, content_hash) for profile, content_hash in rows if content_hash not in live]
        for start in range(0, len(doomed), PAGE):
            # A chunk written since the read that found this row in the cache loses nothing: it stored its vector,
            # and a later re-ingest of its text recomputes (the cache only saves model calls).
            with self.db.transaction() as tx:
                tx.executemany("DELETE FROM embedding_cache WHERE profile = ? AND content_hash = ? AND created < ?",
                               [(p, h, cutoff) for p, h in doomed[start:start + PAGE]])
        return CacheSweep(examined=len(rows), removed=len(doomed))
