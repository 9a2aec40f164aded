"""Embedded index: tantivy BM25 legs beside SQLite; cosine search exact with numpy, or approximate with exact
re-scoring for large KBs (vectors/nearest.py)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentkb.adapters.embedded.lexical.tantivy import LexicalIndexes
from agentkb.adapters.embedded.sqlite import bulk_load
from agentkb.adapters.embedded.sqlite.catalog import check_revision
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.embedding_cache import dropped_texts, release_vectors
from agentkb.adapters.embedded.sqlite.filters import compile_sql_filters
from agentkb.adapters.embedded.vectors import rescore
from agentkb.adapters.embedded.vectors.chunk_table import ChunkTable, ChunkTables
from agentkb.adapters.embedded.vectors.nearest import nearest
from agentkb.errors import DependencyError
from agentkb.models.domain import (
    Chunk,
    Document,
    DocumentHit,
    IndexHit,
    IndexQuery,
    KnowledgeBase,
    LegHit,
)
from agentkb.models.query_text import MAX_QUERY_TERMS, query_words


def fts_query(text: str) -> str | None:
    """A safe FTS5 MATCH expression for the memory store: quoted word terms OR-ed (no operator injection)."""
    terms = query_words(text)
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms[:MAX_QUERY_TERMS])


def _clean_metadata(tags: dict[str, Any]) -> dict[str, Any]:
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in tags.items()}


class SqliteIndex:
    """Index port on the embedded database: SQLite holds everything, the legs read in-memory tables and tantivy."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.lexical = LexicalIndexes(db)
        self.tables = ChunkTables(db.path.parent / f"{db.path.name}.vectors")
        self._searched = False  # set by the first search: from then on writes catch the indexes up (_catch_up)
        self.checkpoints = bulk_load.Checkpoints(db.path)  # the bulk path's, on a thread of their own

    # -- writes -----------------------------------------------------------------------------------------
    def write_document(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
                       replaces: int | None = None) -> None:
        with self.db.transaction() as conn:
            self._write(conn, kb, document, chunks, replaces)
            conn.execute("UPDATE knowledge_bases SET version = version + 1 WHERE id = ?", (kb.id,))
        self._catch_up(kb.id)

    def write_documents(self, kb: KnowledgeBase, items: Sequence[tuple[Document, Sequence[Chunk]]]) -> None:
        """The bulk path (Index port): the whole batch in one transaction, the KB's version moved once. Documents
        the KB does not hold go in set-based without the per-row log triggers (sqlite/bulk_load.py); one it holds
        is replaced as write_document replaces it."""
        with self.checkpoints.deferred(self.db.connection()), self.db.transaction() as conn:
            held = bulk_load.stored_documents(conn, kb.id, [d.id for d, _ in items])
            for document, chunks in items:
                if document.id in held:
                    self._write(conn, kb, document, chunks, None)
            bulk_load.load_new(conn, kb, [(d, c) for d, c in items if d.id not in held])
            conn.execute("UPDATE knowledge_bases SET version = version + 1 WHERE id = ?", (kb.id,))
        self._catch_up(kb.id)

    def _write(self, conn: sqlite3.Connection, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
               replaces: int | None) -> None:
        check_revision(conn, document, replaces, kb.profile)  # at commit: the embedding ran before, unlocked
        dropped = dropped_texts(conn, "document_id = ?", (document.id,))
        conn.execute("DELETE FROM chunks WHERE document_id = ?", (document.id,))
        conn.execute(
            "INSERT INTO documents (id, knowledge_base_id, workspace_id, name, source_url, content_hash, tags,"
            " chunk_count, token_count, created_at, revision, source_path, status, error, content, secret_chunks)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(id) DO UPDATE SET name=excluded.name, source_url=excluded.source_url,"
            " content_hash=excluded.content_hash, tags=excluded.tags, chunk_count=excluded.chunk_count,"
            " token_count=excluded.token_count, revision=excluded.revision, source_path=excluded.source_path,"
            " status=excluded.status, error=excluded.error, content=excluded.content,"
            " secret_chunks=excluded.secret_chunks", bulk_load.document_row(kb, document))
        conn.executemany(bulk_load.chunk_sql(kb)[0], bulk_load.chunk_rows(kb, document, chunks))
        release_vectors(conn, kb.profile.key, dropped)  # after the new chunks: text they keep keeps its vector

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Every chunk, vector and BM25 entry of the KB (its BM25 indexes are deleted with it)."""
        with self.db.transaction() as conn:
            dropped = dropped_texts(conn, "knowledge_base_id = ? AND workspace_id = ?", (kb.id, kb.workspace_id))
            conn.execute("DELETE FROM chunks WHERE knowledge_base_id = ? AND workspace_id = ?",
                         (kb.id, kb.workspace_id))
            release_vectors(conn, kb.profile.key, dropped)
            conn.execute("UPDATE knowledge_bases SET version = version + 1 WHERE id = ?", (kb.id,))
        self.tables.forget(kb.id)
        self.lexical.forget(kb.id)

    def delete_document(self, kb: KnowledgeBase, document_id: str) -> None:
        with self.db.transaction() as conn:
            dropped = dropped_texts(conn, "document_id = ? AND knowledge_base_id = ?", (document_id, kb.id))
            conn.execute("DELETE FROM chunks WHERE document_id = ? AND knowledge_base_id = ?", (document_id, kb.id))
            release_vectors(conn, kb.profile.key, dropped)
            conn.execute("DELETE FROM documents WHERE id = ? AND knowledge_base_id = ?", (document_id, kb.id))
            conn.execute("UPDATE knowledge_bases SET version = version + 1 WHERE id = ?", (kb.id,))
        self._catch_up(kb.id)

    def _catch_up(self, kb_id: str) -> None:
        """After a write commits, in the writer's thread: the BM25 indexes (a tantivy commit, ~100-300 ms here) and the
        KB's vector table are brought up to it, so the searches that follow find them current instead of paying for
        it (issue 26: a search right after a one-chunk write took 9.9x a steady one). Only in a process that
        searches (a CLI ingest of a folder would pay a commit per file for nothing). Best effort: the write has
        committed, and whatever is left is caught up by the next search."""
        if not self._searched:
            return
        try:
            self.lexical.refresh(kb_id)
            if self.tables.cached(kb_id):  # a KB this process never searched is read at its first search
                self.tables.get(self.db.connection(), kb_id)
        except (DependencyError, sqlite3.OperationalError):
            pass

    # -- legs: ids and scores ---------------------------------------------------------------------------
    def _table(self, conn: sqlite3.Connection, workspace_id: str, kb_id: str) -> ChunkTable | None:
        # One read answers both questions: is the KB in this workspace (another's has no chunks here), and is the
        # cached table current.
        self._searched = True
        row = conn.execute("SELECT version FROM knowledge_bases WHERE id = ? AND workspace_id = ?",
                           (kb_id, workspace_id)).fetchone()
        return self.tables.get(conn, kb_id, int(row[0])) if row else None

    def vector_search(self, query: IndexQuery) -> list[LegHit]:
        conn = self.db.connection()
        q = np.asarray(query.vector, dtype=np.float32)
        hits: list[LegHit] = []
        for kb_id in query.knowledge_base_ids:
            table = self._table(conn, query.workspace_id, kb_id)
            if table is None or table.vectors.shape[1] != len(q):
                continue
            allowed = None
            if query.filters:
                pos, found = table.positions(self._allowed_rowids(conn, query, kb_id))
                allowed = np.zeros(len(table.rowids), dtype=bool)
                allowed[pos[found]] = True
            rows, sims = nearest(table, q, query.limit_per_kb, allowed, rescore.reader(conn, len(q)))
            hits.extend(LegHit(table.chunk_ids[i], kb_id, table.document_ids[i], float(s))
                        for i, s in zip(rows.tolist(), sims.tolist(), strict=True))
        return hits

    def lexical_search(self, query: IndexQuery) -> list[LegHit]:
        conn = self.db.connection()
        scored: list[tuple[float, int, LegHit]] = []
        for kb_id in query.knowledge_base_ids:
            table = self._table(conn, query.workspace_id, kb_id)
            if table is None:
                continue
            allowed = self._allowed_rowids(conn, query, kb_id) if query.filters else None
            found = self.lexical.search_chunks(kb_id, query.text or "", query.limit_per_kb, allowed)
            pos, ok = table.positions([r for r, _ in found])
            chunk_ids, document_ids = table.chunk_ids, table.document_ids
            scored.extend((-score, rowid, LegHit(chunk_ids[p], kb_id, document_ids[p], score))
                          for (rowid, score), p, hit in zip(found, pos.tolist(), ok.tolist(), strict=True) if hit)
        if len(query.knowledge_base_ids) > 1:  # one KB's hits come best first, ties by rowid, already
            scored.sort(key=lambda item: item[:2])
        return [hit for _, _, hit in scored]

    def document_search(self, query: IndexQuery) -> list[DocumentHit]:
        conn = self.db.connection()
        out: list[DocumentHit] = []
        for kb_id in query.knowledge_base_ids:
            table = self._table(conn, query.workspace_id, kb_id)
            if table is None:
                continue
            allowed = None
            if query.filters:
                where, params = compile_sql_filters(query.filters)
                allowed = [r[0] for r in conn.execute(
                    f"SELECT DISTINCT c.document_id FROM chunks c WHERE c.knowledge_base_id = ?"
                    f" AND c.workspace_id = ?{where}", (kb_id, query.workspace_id, *params))]
            found = self.lexical.search_documents(kb_id, query.text or "", query.limit_per_kb, allowed)
            pos, ok = table.positions([r for r, _ in found])
            out.extend(DocumentHit(table.document_ids[p], kb_id, score)
                       for (_, score), p, hit in zip(found, pos.tolist(), ok.tolist(), strict=True) if hit)
        return sorted(out, key=lambda d: (-d.score, d.document_id))

    def _allowed_rowids(self, conn: sqlite3.Connection, query: IndexQuery, kb_id: str) -> list[int]:
        """The KB's chunks that pass the tag filters (filters select in SQL before any ranking)."""
        where, params = compile_sql_filters(query.filters)
        return [r[0] for r in conn.execute(
            f"SELECT c.rowid FROM chunks c WHERE c.knowledge_base_id = ? AND c.workspace_id = ?{where}",
            (kb_id, query.workspace_id, *params))]

    def filter_search(self, query: IndexQuery) -> list[LegHit]:
        conn = self.db.connection()
        where, params = compile_sql_filters(query.filters)
        hits: list[LegHit] = []
        for kb_id in query.knowledge_base_ids:
            hits.extend(LegHit(r[0], r[1], r[2], 1.0) for r in conn.execute(
                "SELECT c.id, c.knowledge_base_id, c.document_id FROM chunks c JOIN documents d ON d.id = c.document_id"
                f" WHERE c.knowledge_base_id = ? AND c.workspace_id = ?{where}"
                " ORDER BY d.name, c.chunk_index, c.rowid LIMIT ?",
                (kb_id, query.workspace_id, *params, query.limit_per_kb)))
        return hits

    # -- the final top-k ----------------------------------------------------------------------------------
    def hydrate(self, workspace_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexHit]:
        conn = self.db.connection()
        out: dict[str, IndexHit] = {}
        ids = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(ids), 500):
            part = ids[start:start + 500]
            rows = conn.execute(
                "SELECT c.id, c.knowledge_base_id, c.document_id, c.chunk_index, c.content, d.name, d.source_url,"
                " d.tags, c.pages, c.secret FROM chunks c JOIN documents d ON d.id = c.document_id"
                f" WHERE c.workspace_id = ? AND c.id IN ({','.join('?' * len(part))})", (workspace_id, *part))
            for r in rows:
                metadata = _clean_metadata(json.loads(r[7]))
                if r[8] is not None:  # a PDF chunk's pages; a tag of the same name keeps its value
                    metadata.setdefault("pages", json.loads(r[8]))
                out[r[0]] = IndexHit(r[0], r[1], r[2], r[5], r[6], r[4], r[3], metadata, 0.0,
                                     secret=None if r[9] is None else bool(r[9]))
        return out

    def similarities(self, chunk_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        if not chunk_ids:
            return {}
        conn = self.db.connection()
        marks = ",".join("?" * len(chunk_ids))
        rows = conn.execute(f"SELECT rowid, id, knowledge_base_id FROM chunks WHERE id IN ({marks})",
                            list(chunk_ids)).fetchall()
        q = np.asarray(vector, dtype=np.float32)
        out: dict[str, float] = {}
        for kb_id in {r[2] for r in rows}:
            table = self.tables.get(conn, kb_id)
            mine = [r for r in rows if r[2] == kb_id]
            pos, ok = table.positions([r[0] for r in mine])
            exact = rescore.reader(conn, len(q))(np.asarray([r[0] for r in mine], np.int64))  # float32 always
            for i, (r, p, hit) in enumerate(zip(mine, pos.tolist(), ok.tolist(), strict=True)):
                if hit and table.has_vector[p] and table.vectors.shape[1] == len(q):
                    out[r[1]] = float(exact[i] @ q)
        return out
