"""Embedded memory store: memory revisions, FTS5, exact cosine over cached vectors, memory<->entity links.

Eligibility (visibility, owner, channel, project, confirmed, stale/superseded/expired, recency, sensitivity) is
decided before anything is ranked: the lexical and entity legs by one SQL WHERE clause, the vector leg by the same
rules as one numpy mask over the workspace's cached eligibility columns (a test holds the two equal), so the kNN
ranks only eligible rows. Vectors never change once written (a rewrite is a new row), so the per-workspace
matrix cache grows by appending rows newer than the ones it holds whenever `memory_meta.version` moves.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentkb.adapters.embedded.sqlite_db import Database, register_schema
from agentkb.adapters.embedded.sqlite_index import fts_query
from agentkb.errors import Conflict
from agentkb.models.memory import VISIBILITY_RANK, IdempotencyRecord, MemoryRecord, StoredMemory
from agentkb.models.recall import MemoryView, RecallScope

register_schema("memory", """
CREATE TABLE IF NOT EXISTS memories (
  id INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL, project_id TEXT, visibility TEXT NOT NULL,
  vis_rank INTEGER NOT NULL, owner_id TEXT, channel_id TEXT, type TEXT NOT NULL, name TEXT NOT NULL,
  description TEXT NOT NULL, body TEXT NOT NULL, confirmed INTEGER NOT NULL, stale INTEGER NOT NULL,
  superseded INTEGER NOT NULL DEFAULT 0, supersedes INTEGER, revision INTEGER NOT NULL, valid_until REAL,
  sensitivity INTEGER NOT NULL, source TEXT, request_hash TEXT NOT NULL, created_at TEXT NOT NULL,
  updated_at REAL NOT NULL, entity_ids TEXT NOT NULL, relation_count INTEGER NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS memories_live_name ON memories (workspace_id, name) WHERE superseded = 0;
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
""")

_SUMMARY = ("id, name, revision, workspace_id, project_id, type, visibility, supersedes, entity_ids, relation_count,"
            " created_at, request_hash")
_CHUNK = 500


@dataclass
class _Matrix:
    version: int
    ids: np.ndarray  # sorted int64
    vectors: np.ndarray  # float32 [n, d], L2-normalised


@dataclass
class _Facets:
    """The eligibility columns of a workspace's memories as arrays (strings as integer codes), by version."""

    version: int
    ids: np.ndarray
    vis: np.ndarray
    project: np.ndarray
    channel: np.ndarray
    owner: np.ndarray
    sensitivity: np.ndarray
    confirmed: np.ndarray
    live: np.ndarray  # not superseded and not stale
    valid_until: np.ndarray  # +inf when open-ended
    updated_at: np.ndarray
    codes: dict[str, dict[str | None, int]]

    @classmethod
    def build(cls, version: int, rows: Sequence[Any]) -> _Facets:
        codes: dict[str, dict[str | None, int]] = {"project": {None: -1}, "channel": {None: -1}, "owner": {None: -1}}

        def coded(name: str, column: int) -> np.ndarray:
            table = codes[name]
            return np.fromiter((table.setdefault(r[column], len(table)) for r in rows), np.int64, len(rows))

        def col(column: int, dtype: Any) -> np.ndarray:
            return np.fromiter((r[column] for r in rows), dtype, len(rows))

        valid = np.fromiter((np.inf if r[9] is None else r[9] for r in rows), np.float64, len(rows))
        return cls(version, col(0, np.int64), col(1, np.int64), coded("project", 2), coded("channel", 3),
                   coded("owner", 4), col(5, np.int64), col(6, np.int64) == 1,
                   (col(7, np.int64) == 0) & (col(8, np.int64) == 0), valid, col(10, np.float64), codes)


def eligibility_mask(f: _Facets, scope: RecallScope) -> np.ndarray:
    """Exactly eligibility_sql's WHERE clause, evaluated over cached columns (no row scan in SQL)."""
    unknown = -2  # a request value no memory holds; None in the request never equals a memory's NULL
    project = f.codes["project"].get(scope.project_id, unknown) if scope.project_id is not None else unknown
    channel = f.codes["channel"].get(scope.channel_id, unknown) if scope.channel_id is not None else unknown
    owner = f.codes["owner"].get(scope.principal_id, unknown)
    p_rank, c_rank, o_rank = (VISIBILITY_RANK[v] for v in ("project", "channel", "personal"))
    mask = (f.vis >= scope.audience_rank) & (
        (f.vis > p_rank) | ((f.vis == p_rank) & (f.project == project))
        | ((f.vis == c_rank) & (f.channel == channel)) | ((f.vis == o_rank) & (f.owner == owner)))
    mask &= (f.sensitivity & (7 & ~scope.allowed_sensitivity)) == 0
    if scope.project_only:  # SQL `IS`: a request without a project keeps the memories without one
        mask &= f.project == (f.codes["project"].get(scope.project_id, unknown))
    if not scope.include_unconfirmed:
        mask &= f.confirmed
    if not scope.include_stale:
        mask &= f.live & (f.valid_until > scope.now)
    if scope.since is not None:
        mask &= f.updated_at >= scope.since
    return mask  # type: ignore[no-any-return]


def eligibility_sql(scope: RecallScope) -> tuple[str, dict[str, Any]]:
    """The WHERE clause (over alias `m`) that makes a memory eligible for a recall scope."""
    params: dict[str, Any] = {"ws": scope.workspace_id, "aud": scope.audience_rank, "me": scope.principal_id,
                              "project": scope.project_id, "channel": scope.channel_id,
                              "deny": 7 & ~scope.allowed_sensitivity}
    project, channel, personal = (VISIBILITY_RANK[v] for v in ("project", "channel", "personal"))
    clauses = [
        "m.workspace_id = :ws", "m.vis_rank >= :aud",
        f"(m.vis_rank > {project} OR (m.vis_rank = {project} AND m.project_id = :project)"
        f" OR (m.vis_rank = {channel} AND m.channel_id = :channel)"
        f" OR (m.vis_rank = {personal} AND m.owner_id = :me))",
        "(m.sensitivity & :deny) = 0",
    ]
    if scope.project_only:
        clauses.append("m.project_id IS :project")
    if not scope.include_unconfirmed:
        clauses.append("m.confirmed = 1")
    if not scope.include_stale:
        clauses.append("m.superseded = 0 AND m.stale = 0 AND (m.valid_until IS NULL OR m.valid_until > :now)")
        params["now"] = scope.now
    if scope.since is not None:
        clauses.append("m.updated_at >= :since")
        params["since"] = scope.since
    return " AND ".join(clauses), params


def _summary(row: sqlite3.Row) -> StoredMemory:
    response = {"memory_id": row["id"], "name": row["name"], "revision": row["revision"],
                "workspace_id": row["workspace_id"], "project_id": row["project_id"], "type": row["type"],
                "visibility": row["visibility"], "supersedes": row["supersedes"],
                "entity_ids": json.loads(row["entity_ids"]), "relation_count": row["relation_count"],
                "created_at": row["created_at"]}
    return StoredMemory(row["id"], row["name"], row["revision"], row["request_hash"], response)


class SqliteMemoryStore:
    """MemoryStore port on the embedded database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._matrices: dict[str, _Matrix] = {}
        self._facet_cache: dict[str, _Facets] = {}
        self._lock = threading.Lock()

    # -- writes -------------------------------------------------------------------------------------------------
    def find_live(self, workspace_id: str, name: str) -> StoredMemory | None:
        row = self.db.connection().execute(f"SELECT {_SUMMARY} FROM memories WHERE workspace_id = ? AND name = ?"
                                           " AND superseded = 0", (workspace_id, name)).fetchone()
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
                previous = conn.execute("SELECT id, revision FROM memories WHERE workspace_id = ? AND name = ?"
                                        " AND superseded = 0", (r.workspace_id, r.name)).fetchone()
                if previous is not None:
                    conn.execute("UPDATE memories SET superseded = 1 WHERE id = ?", (previous["id"],))
            cur = conn.execute(
                "INSERT INTO memories (workspace_id, project_id, visibility, vis_rank, owner_id, channel_id, type,"
                " name, description, body, confirmed, stale, supersedes, revision, valid_until, sensitivity, source,"
                " request_hash, created_at, updated_at, entity_ids, relation_count)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (r.workspace_id, r.project_id, r.visibility, VISIBILITY_RANK[r.visibility], r.owner_id, r.channel_id,
                 r.type, r.name, r.description, r.body, int(r.confirmed), int(r.stale),
                 previous["id"] if previous else None, previous["revision"] + 1 if previous else 1, r.valid_until,
                 r.sensitivity, r.source, r.request_hash, r.created_at, r.updated_at, json.dumps(list(r.entity_ids)),
                 r.relation_count))
            memory_id = int(cur.lastrowid or 0)
            ids.append(memory_id)
            workspaces.add(r.workspace_id)
            conn.execute("INSERT INTO memory_vectors (id, workspace_id, embedding) VALUES (?, ?, ?)",
                         (memory_id, r.workspace_id, np.asarray(r.embedding, dtype=np.float32).tobytes()))
            conn.executemany("INSERT OR IGNORE INTO memory_entities VALUES (?, ?, ?)",
                             [(r.workspace_id, e, memory_id) for e in r.entity_ids])
        conn.executemany("INSERT INTO memory_meta (workspace_id, version) VALUES (?, 1) ON CONFLICT (workspace_id)"
                         " DO UPDATE SET version = version + 1", [(w,) for w in sorted(workspaces)])
        return ids

    # -- vectors ------------------------------------------------------------------------------------------------
    def _matrix(self, conn: sqlite3.Connection, ws: str) -> _Matrix:
        row = conn.execute("SELECT version FROM memory_meta WHERE workspace_id = ?", (ws,)).fetchone()
        version = row[0] if row else 0
        cached = self._matrices.get(ws)
        if cached is not None and cached.version == version:
            return cached
        with self._lock:
            cached = self._matrices.get(ws)
            after = int(cached.ids[-1]) if cached is not None and len(cached.ids) else 0
            rows = conn.execute("SELECT id, embedding FROM memory_vectors WHERE workspace_id = ? AND id > ?"
                                " ORDER BY id", (ws, after)).fetchall()
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = (np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
                       if rows else None)
            if cached is not None and len(cached.ids):
                if vectors is not None:
                    ids, vectors = np.concatenate([cached.ids, ids]), np.vstack([cached.vectors, vectors])
                else:
                    ids, vectors = cached.ids, cached.vectors
            matrix = _Matrix(version, ids, vectors if vectors is not None else np.zeros((0, 0), np.float32))
            self._matrices[ws] = matrix
        return matrix

    def vector_dimension(self, workspace_id: str) -> int | None:
        m = self._matrix(self.db.connection(), workspace_id)
        return int(m.vectors.shape[1]) if len(m.ids) else None

    def _eligible(self, conn: sqlite3.Connection, scope: RecallScope) -> np.ndarray:
        """Ids of the eligible memories: eligibility_sql's rules as one vectorised mask over cached columns."""
        f = self._facets(conn, scope.workspace_id)
        eligible: np.ndarray = f.ids[eligibility_mask(f, scope)]
        return eligible

    def _facets(self, conn: sqlite3.Connection, ws: str) -> _Facets:
        row = conn.execute("SELECT version FROM memory_meta WHERE workspace_id = ?", (ws,)).fetchone()
        version = row[0] if row else 0
        cached = self._facet_cache.get(ws)
        if cached is not None and cached.version == version:
            return cached
        rows = conn.execute(
            "SELECT id, vis_rank, project_id, channel_id, owner_id, sensitivity, confirmed, superseded, stale,"
            " valid_until, updated_at FROM memories WHERE workspace_id = ? ORDER BY id", (ws,)).fetchall()
        facets = _Facets.build(version, rows)
        self._facet_cache[ws] = facets
        return facets

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      lifted: Collection[int] = (), lift: float = 0.0) -> list[tuple[int, float]]:
        """Top-k eligible memories by cosine (+ `lift` for `lifted` ids): (memory_id, cosine), best first."""
        conn = self.db.connection()
        m = self._matrix(conn, scope.workspace_id)
        eligible = self._eligible(conn, scope)
        if not len(m.ids) or not len(eligible):
            return []
        pos = np.searchsorted(m.ids, eligible)
        pos = pos[(pos < len(m.ids)) & (m.ids[np.minimum(pos, len(m.ids) - 1)] == eligible)]
        q = np.asarray(vector, dtype=np.float32)
        # Gathering rows copies them: past a quarter of the matrix one full product is cheaper.
        sims = m.vectors[pos] @ q if len(pos) * 4 < len(m.ids) else (m.vectors @ q)[pos]
        ids = m.ids[pos]
        rank = sims + np.float32(lift) * np.isin(ids, np.fromiter(lifted, np.int64)) if lifted and lift else sims
        k = min(k, len(ids))
        top = np.argpartition(-rank, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        top = top[np.lexsort((ids[top], -rank[top]))]
        return [(int(ids[i]), float(sims[i])) for i in top]

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        m = self._matrix(self.db.connection(), workspace_id)
        wanted = np.asarray(sorted(set(memory_ids)), dtype=np.int64)
        if not len(m.ids) or not len(wanted):
            return {}
        pos = np.searchsorted(m.ids, wanted)
        ok = (pos < len(m.ids)) & (m.ids[np.minimum(pos, len(m.ids) - 1)] == wanted)
        sims = m.vectors[pos[ok]] @ np.asarray(vector, dtype=np.float32)
        return {int(i): float(s) for i, s in zip(wanted[ok], sims, strict=True)}

    # -- lexical, links, views ----------------------------------------------------------------------------------
    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        """Top-k eligible memories by BM25 over name, description and body: (memory_id, relevance > 0)."""
        match = fts_query(text)
        if match is None:
            return []
        where, params = eligibility_sql(scope)
        rows = self.db.connection().execute(
            "SELECT m.id, bm25(memories_fts, 2.0, 1.5, 1.0) AS s FROM memories_fts"
            f" JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH :match AND {where}"
            " ORDER BY s, m.id LIMIT :k", {**params, "match": match, "k": k}).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), _CHUNK):
            part = ids[start:start + _CHUNK]
            for mid, eid in self.db.connection().execute(
                    f"SELECT memory_id, entity_id FROM memory_entities WHERE memory_id IN ({','.join('?' * len(part))})"
                    " AND +workspace_id = ? ORDER BY memory_id, entity_id", (*part, workspace_id)):
                out.setdefault(int(mid), []).append(eid)
        return out

    def linked_memories(self, scope: RecallScope, entity_ids: Sequence[str],
                        per_entity_cap: int) -> list[tuple[int, str]]:
        """Eligible memories linked to entities, (memory_id, entity_id), at most `per_entity_cap` newest per entity."""
        if not entity_ids:
            return []
        where, params = eligibility_sql(scope)
        # Walk the links entity by entity (primary-key prefix), then each memory by id: never a scan of memories.
        sql = ("SELECT memory_id, entity_id FROM (SELECT me.memory_id, me.entity_id, ROW_NUMBER() OVER ("
               "PARTITION BY me.entity_id ORDER BY m.updated_at DESC, m.id DESC) AS n FROM json_each(:entities) j"
               " CROSS JOIN memory_entities me ON me.workspace_id = :ws AND me.entity_id = j.value"
               f" CROSS JOIN memories m ON m.id = me.memory_id WHERE {where}) WHERE n <= :cap")
        rows = self.db.connection().execute(sql, {**params, "entities": json.dumps(list(entity_ids)),
                                                  "cap": per_entity_cap})
        return [(int(r[0]), r[1]) for r in rows]

    def views(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryView]:
        out: dict[int, MemoryView] = {}
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), _CHUNK):
            part = ids[start:start + _CHUNK]
            for r in self.db.connection().execute(
                    "SELECT id, name, COALESCE(project_id, workspace_id), type, description, substr(body, 1, 200)"
                    f" FROM memories WHERE +workspace_id = ? AND id IN ({','.join('?' * len(part))})",
                    (workspace_id, *part)):
                out[int(r[0])] = MemoryView(int(r[0]), r[1], r[2], r[3], r[4], r[5])
        return out
