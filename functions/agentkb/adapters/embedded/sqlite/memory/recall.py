"""The embedded memory store's recall legs: exact cosine over cached vectors, BM25 over cached postings, entity links,
views.

Eligibility is decided before anything is ranked, by the one compiled predicate (models/eligibility.py): as SQL for
the entity legs and as a numpy mask over the workspace's cached facet columns for the vector and lexical legs. The
vector matrix grows by appending rows newer than the ones it holds whenever `memory_meta.version` moves; an
in-place change or a delete bumps `memory_rewrites`, which rebuilds it whole.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.eligibility import FACET_COLUMNS, Facets, eligibility_mask, eligibility_sql
from agentkb.adapters.embedded.sqlite.memory.lexical import MemoryPostings, query_stems
from agentkb.models.recall.api import MemoryView, RecallScope

CHUNK = 500
ELIGIBLE_CACHE = 16  # (scope, facets version) -> eligible ids: the legs of concurrent recalls, not a history


@dataclass
class _Matrix:
    version: tuple[int, int]
    ids: np.ndarray  # sorted int64
    vectors: np.ndarray  # float32 [n, d], L2-normalised


class SqliteMemoryRecall:
    """The read legs of the MemoryStore port on the embedded database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._matrices: dict[str, _Matrix] = {}
        self._facet_cache: dict[str, Facets] = {}
        self._postings = MemoryPostings()
        self._eligible_cache: dict[tuple[RecallScope, int], np.ndarray] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _versions(conn: sqlite3.Connection, ws: str) -> tuple[int, int]:
        """(writes, rewrites) of a workspace: any write moves the first, a change or delete the second."""
        row = conn.execute("SELECT (SELECT version FROM memory_meta WHERE workspace_id = :ws),"
                           " (SELECT rewrites FROM memory_rewrites WHERE workspace_id = :ws)", {"ws": ws}).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def _matrix(self, conn: sqlite3.Connection, ws: str) -> _Matrix:
        version = self._versions(conn, ws)
        cached = self._matrices.get(ws)
        if cached is not None and cached.version == version:
            return cached
        with self._lock:
            cached = self._matrices.get(ws)
            if cached is not None and cached.version[1] != version[1]:
                cached = None  # rows changed or went away: rebuild, never append
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
            # Only workspaces holding memories are remembered: a wildcard key may name any workspace id
            if len(ids):
                self._matrices[ws] = matrix
            else:
                self._matrices.pop(ws, None)
        return matrix

    def vector_dimension(self, workspace_id: str) -> int | None:
        m = self._matrix(self.db.connection(), workspace_id)
        return int(m.vectors.shape[1]) if len(m.ids) else None

    def _eligible(self, conn: sqlite3.Connection, scope: RecallScope) -> np.ndarray:
        """Ids of the eligible memories: eligibility_sql's rules as one vectorised mask over cached columns. The
        last few answers are kept by (scope, facets version): a recall's two legs compute it once."""
        f = self._facets(conn, scope.workspace_id)
        key = (scope, f.version)
        eligible = self._eligible_cache.get(key)
        if eligible is None:
            eligible = f.ids[eligibility_mask(f, scope)]
            if len(self._eligible_cache) >= ELIGIBLE_CACHE:
                self._eligible_cache.clear()
            self._eligible_cache[key] = eligible
        return eligible

    def _facets(self, conn: sqlite3.Connection, ws: str) -> Facets:
        version = self._versions(conn, ws)
        cached = self._facet_cache.get(ws)
        if cached is not None and cached.version == hash(version):
            return cached
        rows = conn.execute(f"SELECT id, {', '.join(FACET_COLUMNS)} FROM memories WHERE workspace_id = ? ORDER BY id",
                            (ws,)).fetchall()
        facets = Facets.build(hash(version), rows)
        if rows:  # as in _matrix: only workspaces holding memories are remembered
            self._facet_cache[ws] = facets
        else:
            self._facet_cache.pop(ws, None)
        return facets

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
        """Top-k eligible memories by cosine + `boosts` (ranking only): (memory_id, cosine), best first."""
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
        rank = sims
        if boosts:
            rank = sims + np.fromiter((boosts.get(int(i), 0.0) for i in ids), np.float32, len(ids))
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

    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        """Top-k eligible memories by BM25 over name, description and body: (memory_id, relevance > 0), best first,
        then id (lexical.py: cached postings, the eligibility mask applied before the top k are taken)."""
        stems = query_stems(text)
        if not stems or k <= 0:
            return []
        conn = self.db.connection()
        postings = self._postings.get(conn, scope.workspace_id, self._versions(conn, scope.workspace_id))
        eligible = self._eligible(conn, scope)
        if not len(postings.ids) or not len(eligible):
            return []
        pos = np.searchsorted(postings.ids, eligible)
        pos = pos[(pos < len(postings.ids)) & (postings.ids[np.minimum(pos, len(postings.ids) - 1)] == eligible)]
        scores = postings.scores(stems)[pos]
        hit = scores > 0
        pos, scores = pos[hit], scores[hit]
        ids = postings.ids[pos]
        k = min(k, len(ids))
        if not k:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(ids) else np.arange(len(ids))
        top = top[np.lexsort((ids[top], -scores[top]))]
        return [(int(ids[i]), float(scores[i])) for i in top]

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        ids = list(dict.fromkeys(memory_ids))
        for start in range(0, len(ids), CHUNK):
            part = ids[start:start + CHUNK]
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
        for start in range(0, len(ids), CHUNK):
            part = ids[start:start + CHUNK]
            for r in self.db.connection().execute(
                    "SELECT id, name, COALESCE(project_id, workspace_id), type, description, substr(body, 1, 200)"
                    f" FROM memories WHERE +workspace_id = ? AND id IN ({','.join('?' * len(part))})",
                    (workspace_id, *part)):
                out[int(r[0])] = MemoryView(memory_id=int(r[0]), name=r[1], namespace=r[2], type=r[3],
                                            description=r[4], snippet=r[5])
        return out
