"""The embedded engine's shadow generation (ports/index.py ShadowGenerations): a KB re-embedded under another profile.

`profile_switches` holds a KB's pending target; `shadow_vectors` the target profile's vector of each live chunk
(by chunk id: a chunk id names its document, revision and index, so a rewritten document's new chunks have none).
Searches never read either table. The switch is one transaction: it checks that every live chunk with a vector has
its shadow (a document written or deleted meanwhile shows up here, and the switch waits for it), copies the shadow
vectors over the live ones, changes the KB's profile and moves its version (the vector tables reload through the
change log's update trigger), and forgets the shadow and the pending row. A crash before it leaves the KB on its
old profile with the shadow written so far, which a re-run keeps.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from agentkb.adapters.embedded.sqlite import catalog, embedding_cache  # noqa: F401  (their tables come first)
from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.adapters.embedded.sqlite.embedding_cache import SAME_TEXT, vector_key
from agentkb.errors import Conflict, NotFound
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase

register_schema("generations", """
CREATE TABLE IF NOT EXISTS profile_switches (
    knowledge_base_id TEXT PRIMARY KEY, embedding_model TEXT NOT NULL, embedding_dimension INTEGER NOT NULL,
    started_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS shadow_vectors (
    chunk_id TEXT PRIMARY KEY, knowledge_base_id TEXT NOT NULL, document_id TEXT NOT NULL,
    revision INTEGER NOT NULL, embedding BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS shadow_vectors_document ON shadow_vectors (knowledge_base_id, document_id);
""")

_UNSHADOWED = ("SELECT DISTINCT c.document_id FROM chunks c LEFT JOIN shadow_vectors s ON s.chunk_id = c.id"
               " WHERE c.knowledge_base_id = ? AND c.embedding IS NOT NULL AND s.chunk_id IS NULL"
               " ORDER BY c.document_id")


class SqliteShadowGenerations:
    """ShadowGenerations port on the embedded database."""

    settle_s = 0.0  # the old vectors go with the switch itself; a search straddling it embeds again (search service)

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending(self, kb: KnowledgeBase) -> EmbeddingProfile | None:
        row = self.db.connection().execute(
            "SELECT embedding_model, embedding_dimension FROM profile_switches WHERE knowledge_base_id = ?",
            (kb.id,)).fetchone()
        return EmbeddingProfile(row[0], int(row[1])) if row else None

    def begin(self, kb: KnowledgeBase, target: EmbeddingProfile) -> None:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT embedding_model, embedding_dimension FROM profile_switches"
                               " WHERE knowledge_base_id = ?", (kb.id,)).fetchone()
            if row is not None and EmbeddingProfile(row[0], int(row[1])) != target:
                raise Conflict(f"A switch of this knowledge base to {row[0]} ({row[1]}-d) is pending: finish it "
                               f"with --embedding-model {row[0]}@{row[1]}",
                               details={"pendingModel": row[0], "pendingDimension": int(row[1])})
            if row is None:
                conn.execute("INSERT INTO profile_switches VALUES (?, ?, ?, ?)",
                             (kb.id, target.model, target.dimension, datetime.now(UTC).isoformat()))

    def staged(self, kb: KnowledgeBase, target: EmbeddingProfile) -> dict[str, int]:
        conn = self.db.connection()
        return {row[0]: int(row[1]) for row in conn.execute(
            "SELECT document_id, max(revision) FROM shadow_vectors WHERE knowledge_base_id = ?"
            " GROUP BY document_id", (kb.id,))}

    def stage(self, kb: KnowledgeBase, target: EmbeddingProfile, document: Document,
              chunks: Sequence[Chunk]) -> None:
        rows = [(c.id, kb.id, document.id, document.revision, _vector(c.embedding, target)) for c in chunks
                if c.embedding is not None]
        with self.db.transaction() as conn:
            _require_pending(conn, kb, target)
            conn.execute("DELETE FROM shadow_vectors WHERE knowledge_base_id = ? AND document_id = ?",
                         (kb.id, document.id))
            conn.executemany("INSERT INTO shadow_vectors VALUES (?, ?, ?, ?, ?)", rows)

    def unstage(self, kb: KnowledgeBase, target: EmbeddingProfile, document_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM shadow_vectors WHERE knowledge_base_id = ? AND document_id = ?",
                         (kb.id, document_id))

    def switch(self, kb: KnowledgeBase, target: EmbeddingProfile) -> list[str]:
        with self.db.transaction() as conn:
            _require_pending(conn, kb, target)
            missing = [row[0] for row in conn.execute(_UNSHADOWED, (kb.id,))]
            if missing:
                return missing
            conn.execute(
                "UPDATE chunks SET embedding = (SELECT s.embedding FROM shadow_vectors s WHERE s.chunk_id = chunks.id)"
                " WHERE knowledge_base_id = ? AND embedding IS NOT NULL", (kb.id,))
            conn.execute("UPDATE knowledge_bases SET embedding_model = ?, embedding_dimension = ?,"
                         " version = version + 1 WHERE id = ?", (target.model, target.dimension, kb.id))
            conn.execute("DELETE FROM shadow_vectors WHERE knowledge_base_id = ?", (kb.id,))
            conn.execute("DELETE FROM profile_switches WHERE knowledge_base_id = ?", (kb.id,))
        return []

    def abandon(self, kb: KnowledgeBase, target: EmbeddingProfile) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM shadow_vectors WHERE knowledge_base_id = ?", (kb.id,))
            conn.execute("DELETE FROM profile_switches WHERE knowledge_base_id = ?", (kb.id,))

    def drop(self, kb: KnowledgeBase, old: EmbeddingProfile) -> None:
        """The old vectors went with the switch; what is left are the old profile's cache rows of this KB's text
        that no KB still on that profile holds."""
        with self.db.transaction() as conn:
            keys = {vector_key(r[0], r[1]): (r[2], r[1]) for r in conn.execute(
                "SELECT content, context, content_hash FROM chunks WHERE knowledge_base_id = ?", (kb.id,))}
            conn.executemany(
                "DELETE FROM embedding_cache WHERE profile = ? AND content_hash = ? AND NOT EXISTS"
                " (SELECT 1 FROM chunks JOIN knowledge_bases k ON k.id = chunks.knowledge_base_id"
                f"  WHERE {SAME_TEXT} AND chunks.context = ? AND k.embedding_model = ?"
                "  AND k.embedding_dimension = ?)",
                [(old.key, key, content_hash, content_hash, context, old.model, old.dimension)
                 for key, (content_hash, context) in keys.items()])


    def leftover(self, kb: KnowledgeBase) -> EmbeddingProfile | None:
        return None  # the old vectors go in the switch's own transaction; cache rows left are the sweep's


def _require_pending(conn: sqlite3.Connection, kb: KnowledgeBase, target: EmbeddingProfile) -> None:
    row = conn.execute("SELECT embedding_model, embedding_dimension FROM profile_switches WHERE knowledge_base_id = ?",
                       (kb.id,)).fetchone()
    if row is None or EmbeddingProfile(row[0], int(row[1])) != target:
        raise NotFound(f"No switch of this knowledge base to {target.model} ({target.dimension}-d) is pending")


def _vector(vector: Sequence[float], target: EmbeddingProfile) -> bytes:
    if len(vector) != target.dimension:
        raise ValueError(f"a {len(vector)}-d vector for a {target.dimension}-d profile")
    return np.asarray(vector, dtype=np.float32).tobytes()

