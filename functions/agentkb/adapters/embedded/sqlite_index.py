"""Embedded index: FTS5 (porter) BM25 over chunk text and exact float32 cosine search with numpy."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentkb.adapters.embedded.sqlite_db import Database
from agentkb.errors import WriteConflict
from agentkb.models.domain import Chunk, CompiledTagFilter, Document, IndexHit, IndexQuery, KnowledgeBase

STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "how", "i", "if", "in",
    "into", "is", "it", "its", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with", "do", "does", "did",
    "can",
))
MAX_QUERY_TERMS = 64
FTS_PREFETCH = 200
_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str | None:
    """A safe FTS5 MATCH expression: quoted word terms OR-ed together (no operator injection)."""
    words = list(dict.fromkeys(w for w in _WORD.findall(text.lower()) if w.strip("_")))
    terms = [w for w in words if w not in STOPWORDS] or words
    if not terms:
        return None
    return " OR ".join(f'"{t}"' for t in terms[:MAX_QUERY_TERMS])


def _like(value: str, where: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return {"contains": f"%{escaped}%", "starts_with": f"{escaped}%", "ends_with": f"%{escaped}"}[where]


def compile_sql_filters(filters: Sequence[CompiledTagFilter]) -> tuple[str, list[Any]]:
    """Engine-neutral filters -> an AND-ed SQL fragment over the chunk slot columns (parameterised)."""
    clauses: list[str] = []
    params: list[Any] = []
    for f in filters:
        col = f"c.{f.slot}"  # slot names come from our own definitions, never from the request
        value: Any = int(f.value) if f.field_type == "boolean" else f.value
        op = f.operator
        if op in ("contains", "starts_with", "ends_with"):
            clauses.append(f"{col} LIKE ? ESCAPE '\\'")
            params.append(_like(str(value), op))
        elif op == "not_contains":
            clauses.append(f"{col} IS NOT NULL AND {col} NOT LIKE ? ESCAPE '\\'")
            params.append(_like(str(value), "contains"))
        elif op == "between":
            clauses.append(f"{col} BETWEEN ? AND ?")
            params.extend([value, f.value_to])
        else:
            sql_op = {"eq": "=", "neq": "!=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}[op]
            clauses.append(f"{col} {sql_op} ?")
            params.append(value)
    return "".join(f" AND ({c})" for c in clauses), params


@dataclass
class _Matrix:
    version: int
    rowids: np.ndarray  # sorted int64
    vectors: np.ndarray  # float32 [n, d], L2-normalised


def _clean_metadata(tags: dict[str, Any]) -> dict[str, Any]:
    return {k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in tags.items()}


class SqliteIndex:
    """Index port on the embedded database; vectors cached per KB in memory, refreshed by KB version."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._matrices: dict[str, _Matrix] = {}
        self._lock = threading.Lock()

    # -- writes -----------------------------------------------------------------------------------------
    def write_document(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk]) -> None:
        slots = {t.slot: document.tags.get(t.tag_name) for t in kb.tag_definitions}
        slot_values = {s: (int(v) if isinstance(v, bool) else v) for s, v in slots.items()}
        columns = ["id", "workspace_id", "knowledge_base_id", "document_id", "chunk_index", "content",
                   "token_count", "content_hash", "embedding", "pages", *slot_values]
        sql = f"INSERT INTO chunks ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        try:
            self._write(kb, document, chunks, sql, slot_values)
        except sqlite3.IntegrityError as exc:
            if "documents.knowledge_base_id, documents.name" in str(exc):
                raise WriteConflict(f"another document named {document.name!r} was written concurrently") from exc
            raise

    def _write(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk], sql: str,
               slot_values: dict[str, Any]) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM chunks WHERE document_id = ?", (document.id,))
            conn.execute(
                "INSERT INTO documents (id, knowledge_base_id, workspace_id, name, source_url, content_hash, tags,"
                " chunk_count, token_count, created_at, revision, source_path, status, error, content)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET name=excluded.name, source_url=excluded.source_url,"
                " content_hash=excluded.content_hash, tags=excluded.tags, chunk_count=excluded.chunk_count,"
                " token_count=excluded.token_count, revision=excluded.revision, source_path=excluded.source_path,"
                " status=excluded.status, error=excluded.error, content=excluded.content",
                (document.id, kb.id, kb.workspace_id, document.name, document.source_url, document.content_hash,
                 json.dumps(document.tags), document.chunk_count, document.token_count, document.created_at,
                 document.revision, document.source_path, document.status, document.error, document.content))
            conn.executemany(sql, [
                (c.id, kb.workspace_id, kb.id, document.id, c.chunk_index, c.content, c.token_count,
                 c.content_hash, np.asarray(c.embedding, dtype=np.float32).tobytes() if c.embedding else None,
                 json.dumps(list(c.pages)) if c.pages else None, *slot_values.values()) for c in chunks])
            conn.execute("UPDATE knowledge_bases SET version = version + 1 WHERE id = ?", (kb.id,))

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Every chunk, vector and FTS entry of the KB (the FTS rows go with the chunks' delete trigger)."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM chunks WHERE knowledge_base_id = ? AND workspace_id = ?",
                         (kb.id, kb.workspace_id))
            conn.execute("UPDATE knowledge_bases SET version = version + 1 WHERE id = ?", (kb.id,))
        with self._lock:
            self._matrices.pop(kb.id, None)

    def delete_document(self, kb: KnowledgeBase, document_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM chunks WHERE document_id = ? AND knowledge_base_id = ?", (document_id, kb.id))
            conn.execute("DELETE FROM documents WHERE id = ? AND knowledge_base_id = ?", (document_id, kb.id))
            conn.execute("UPDATE knowledge_bases SET version = version + 1 WHERE id = ?", (kb.id,))

    # -- vectors ----------------------------------------------------------------------------------------
    def _matrix(self, conn: sqlite3.Connection, kb_id: str) -> _Matrix:
        row = conn.execute("SELECT version FROM knowledge_bases WHERE id = ?", (kb_id,)).fetchone()
        version = row["version"] if row else -1
        cached = self._matrices.get(kb_id)
        if cached is not None and cached.version == version:
            return cached
        with self._lock:
            rows = conn.execute("SELECT rowid, embedding FROM chunks WHERE knowledge_base_id = ?"
                                " AND embedding IS NOT NULL ORDER BY rowid", (kb_id,)).fetchall()
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            blob = b"".join(r[1] for r in rows)
            vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1) if rows else np.zeros((0, 1),
                                                                                                       np.float32)
            matrix = _Matrix(version, rowids, vectors)
            self._matrices[kb_id] = matrix
        return matrix

    def _cosine(self, conn: sqlite3.Connection, kb_id: str, rowids: Sequence[int],
                vector: Sequence[float]) -> dict[int, float]:
        m = self._matrix(conn, kb_id)
        ids = np.asarray(rowids, dtype=np.int64)
        pos = np.searchsorted(m.rowids, ids)
        ok = (pos < len(m.rowids)) & (m.rowids[np.minimum(pos, len(m.rowids) - 1)] == ids) if len(m.rowids) else \
            np.zeros(len(ids), bool)
        q = np.asarray(vector, dtype=np.float32)
        sims = m.vectors[pos[ok]] @ q if ok.any() else np.zeros(0, np.float32)
        return {int(r): float(s) for r, s in zip(ids[ok], sims, strict=True)}

    def vector_search(self, query: IndexQuery) -> list[IndexHit]:
        conn = self.db.connection()
        q = np.asarray(query.vector, dtype=np.float32)
        where, params = compile_sql_filters(query.filters)
        scored: list[tuple[int, float]] = []
        for kb_id in query.knowledge_base_ids:
            m = self._matrix(conn, kb_id)
            if not len(m.rowids) or m.vectors.shape[1] != len(q):
                continue
            if query.filters:
                allowed = np.fromiter((r[0] for r in conn.execute(
                    f"SELECT c.rowid FROM chunks c WHERE c.knowledge_base_id = ? AND c.workspace_id = ?{where}",
                    (kb_id, query.workspace_id, *params))), dtype=np.int64)
                pos = np.flatnonzero(np.isin(m.rowids, allowed))
                rowids, sims = m.rowids[pos], m.vectors[pos] @ q
            else:
                rowids, sims = m.rowids, m.vectors @ q
            k = min(query.limit_per_kb, len(sims))
            if k == 0:
                continue
            top = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
            top = top[np.lexsort((rowids[top], -sims[top]))]
            scored.extend((int(rowids[i]), float(sims[i])) for i in top)
        hits = self._hydrate(conn, [r for r, _ in scored], query.workspace_id)
        return [_with_score(hits[r], s, s) for r, s in scored if r in hits]

    def similarities(self, chunk_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        conn = self.db.connection()
        marks = ",".join("?" * len(chunk_ids))
        rows = conn.execute(f"SELECT rowid, id, knowledge_base_id FROM chunks WHERE id IN ({marks})",
                            list(chunk_ids)).fetchall()
        out: dict[str, float] = {}
        for kb_id in {r["knowledge_base_id"] for r in rows}:
            mine = [r for r in rows if r["knowledge_base_id"] == kb_id]
            sims = self._cosine(conn, kb_id, [r["rowid"] for r in mine], vector)
            out.update({r["id"]: sims[r["rowid"]] for r in mine if r["rowid"] in sims})
        return out

    # -- lexical and tag-only ---------------------------------------------------------------------------
    def lexical_search(self, query: IndexQuery) -> list[IndexHit]:
        match = fts_query(query.text or "")
        if match is None:
            return []
        conn = self.db.connection()
        where, params = compile_sql_filters(query.filters)
        scored: list[tuple[int, float, str]] = []
        for kb_id in query.knowledge_base_ids:
            params_kb = (kb_id, query.workspace_id, *params)
            # Fast path: score the best matches of the whole FTS index first, then keep this KB's rows. Exact
            # whenever it yields `limit` rows (a better row of this KB would be among the global best); else the
            # full join below runs. Joining every match to its chunk row is what costs the time.
            rows = conn.execute(
                "SELECT c.rowid, f.s FROM (SELECT rowid, bm25(chunks_fts) AS s FROM chunks_fts WHERE chunks_fts"
                " MATCH ? ORDER BY s, rowid LIMIT ?) f JOIN chunks c ON c.rowid = f.rowid"
                f" WHERE c.knowledge_base_id = ? AND c.workspace_id = ?{where} ORDER BY f.s, c.rowid LIMIT ?",
                (match, max(4 * query.limit_per_kb, FTS_PREFETCH), *params_kb, query.limit_per_kb)).fetchall()
            if len(rows) < query.limit_per_kb:
                rows = conn.execute(
                    "SELECT c.rowid, bm25(chunks_fts) AS s FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid"
                    f" WHERE chunks_fts MATCH ? AND c.knowledge_base_id = ? AND c.workspace_id = ?{where}"
                    " ORDER BY s, c.rowid LIMIT ?", (match, *params_kb, query.limit_per_kb)).fetchall()
            scored.extend((r[0], -float(r[1]), kb_id) for r in rows)
        scored.sort(key=lambda item: (-item[1], item[0]))
        hits = self._hydrate(conn, [r for r, _, _ in scored], query.workspace_id)
        sims: dict[int, float] = {}
        if query.vector is not None:
            for kb_id in query.knowledge_base_ids:
                sims.update(self._cosine(conn, kb_id, [r for r, _, k in scored if k == kb_id], query.vector))
        return [_with_score(hits[r], s, sims.get(r)) for r, s, _ in scored if r in hits]

    def filter_search(self, query: IndexQuery) -> list[IndexHit]:
        conn = self.db.connection()
        where, params = compile_sql_filters(query.filters)
        rowids: list[int] = []
        for kb_id in query.knowledge_base_ids:
            rowids.extend(r[0] for r in conn.execute(
                "SELECT c.rowid FROM chunks c JOIN documents d ON d.id = c.document_id"
                f" WHERE c.knowledge_base_id = ? AND c.workspace_id = ?{where}"
                " ORDER BY d.name, c.chunk_index, c.rowid LIMIT ?",
                (kb_id, query.workspace_id, *params, query.limit_per_kb)))
        hits = self._hydrate(conn, rowids, query.workspace_id)
        return [_with_score(hits[r], 1.0, 1.0) for r in rowids if r in hits]

    def _hydrate(self, conn: sqlite3.Connection, rowids: Sequence[int], workspace_id: str) -> dict[int, IndexHit]:
        if not rowids:
            return {}
        out: dict[int, IndexHit] = {}
        for start in range(0, len(rowids), 500):
            part = list(rowids[start:start + 500])
            rows = conn.execute(
                "SELECT c.rowid, c.id, c.knowledge_base_id, c.document_id, c.chunk_index, c.content, d.name,"
                " d.source_url, d.tags, c.pages FROM chunks c JOIN documents d ON d.id = c.document_id"
                f" WHERE c.workspace_id = ? AND c.rowid IN ({','.join('?' * len(part))})", (workspace_id, *part))
            for r in rows:
                metadata = _clean_metadata(json.loads(r[8]))
                if r[9] is not None:  # a PDF chunk's pages; a tag of the same name keeps its value
                    metadata.setdefault("pages", json.loads(r[9]))
                out[r[0]] = IndexHit(r[1], r[2], r[3], r[6], r[7], r[5], r[4], metadata, 0.0)
        return out


def _with_score(hit: IndexHit, score: float, similarity: float | None) -> IndexHit:
    return IndexHit(hit.chunk_id, hit.knowledge_base_id, hit.document_id, hit.document_name, hit.source_url,
                    hit.content, hit.chunk_index, hit.metadata, score, similarity)
