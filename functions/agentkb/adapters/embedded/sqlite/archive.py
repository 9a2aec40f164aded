"""Embedded WorkspaceArchive (ports/archive.py): a workspace's chunks, memory revisions and traces, read in id
order and written back under their own ids, in the one SQLite database; and what an import that gives the records
new ids stores (services/portability/rename.py): its decision (`archive_imports`) and its memory id map
(`archive_memory_ids`, old id -> new id per source and target workspace).

A memory id is the table's INTEGER PRIMARY KEY, which SQLite allocates as the largest id + 1: the map allocates
above both the largest memory id and the largest id it mapped before, so two imports never share one. A memory
another process writes between the map and the import's write takes the table's next id, which may be a mapped
one: the import then stops with Conflict, and its re-run maps that id afresh (a mapped id held by another
workspace is never the import's own).
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Collection, Iterator, Sequence
from typing import Any

import numpy as np

from agentkb.adapters.embedded.sqlite import catalog, snapshot, traces
from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.adapters.embedded.sqlite.memory import store
from agentkb.adapters.embedded.sqlite.memory.details import detail_sql, to_detail
from agentkb.errors import Conflict
from agentkb.models.domain import Chunk, KnowledgeBase
from agentkb.models.memory.api import VISIBILITY_RANK, IdempotencyRecord
from agentkb.models.recall.trace import decode_trace, encode_trace
from agentkb.ports.archive import ArchivedMemory, ArchivedTrace

_MEMORY_COLUMNS = ("id, workspace_id, project_id, visibility, vis_rank, owner_id, channel_id, type, name, description,"
                   " body, confirmed, stale, superseded, supersedes, revision, valid_until, sensitivity, source,"
                   " request_hash, created_at, updated_at, entity_ids, relation_count, name_key, occurred_at")
_PAGE = 200
_TABLES = (catalog, snapshot, traces, store)  # the modules that register the tables read here (db.register_schema)

register_schema("archive", """
CREATE TABLE IF NOT EXISTS archive_imports (
  source_workspace_id TEXT NOT NULL, workspace_id TEXT NOT NULL, remap INTEGER NOT NULL,
  PRIMARY KEY (source_workspace_id, workspace_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS archive_memory_ids (
  source_workspace_id TEXT NOT NULL, workspace_id TEXT NOT NULL, old_id INTEGER NOT NULL,
  new_id INTEGER NOT NULL UNIQUE, PRIMARY KEY (source_workspace_id, workspace_id, old_id)) WITHOUT ROWID;
""")
_IDS = "(SELECT value FROM json_each(?))"  # a list of ids as one JSON parameter: no limit on how many
CHUNKS_OF_DOCUMENTS = (  # by the documents' index: `+` keeps SQLite off the KB's, a scan of all its chunks; no
    # ORDER BY: SQLite's sort copied every row, vectors and all, into a temporary B-tree (a third of the read)
    "SELECT id, document_id, chunk_index, content, token_count, content_hash, embedding, pages, context, secret"
    f" FROM chunks WHERE +knowledge_base_id = ? AND document_id IN {_IDS}")


def _chunk(row: tuple[Any, ...]) -> Chunk:
    chunk_id, document_id, index, content, tokens, content_hash, blob, pages, context, secret = row
    return Chunk(chunk_id, document_id, int(index), content, int(tokens), content_hash,
                 array("f", blob) if blob else None,  # float32 as stored: no Python floats
                 tuple(json.loads(pages)) if pages else (), context, bool(secret))


def _by_index(chunk: Chunk) -> int:
    return chunk.chunk_index


class SqliteWorkspaceArchive:
    """WorkspaceArchive port on the embedded database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def document_chunks(self, kb: KnowledgeBase, document_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """One query for the lot (a query per document cost a 1M-chunk import's read-back ~1 s more)."""
        cursor = self.db.connection().cursor()
        cursor.row_factory = None  # plain tuples: a Row per chunk costs more than the chunk
        out: dict[str, list[Chunk]] = {}
        for row in cursor.execute(CHUNKS_OF_DOCUMENTS, (kb.id, json.dumps(list(document_ids)))):
            out.setdefault(row[1], []).append(_chunk(row))
        for chunks in out.values():
            chunks.sort(key=_by_index)  # mostly in order already (rowid order): one pass
        return out

    def memories(self, workspace_id: str, after_id: int, limit: int) -> list[ArchivedMemory]:
        conn = self.db.connection()
        rows = conn.execute(f"{detail_sql()} WHERE m.workspace_id = ? AND m.id > ? ORDER BY m.id LIMIT ?",
                            (workspace_id, after_id, limit)).fetchall()
        ids = [int(r["id"]) for r in rows]
        marks = ",".join("?" * len(ids))
        vectors = {int(r[0]): np.frombuffer(r[1], dtype=np.float32).tolist() for r in conn.execute(
            f"SELECT id, embedding FROM memory_vectors WHERE id IN ({marks})", ids)}
        keys: dict[int, list[IdempotencyRecord]] = {}
        for r in conn.execute(f"SELECT memory_id, principal, key, body_hash FROM memory_idempotency WHERE"
                              f" workspace_id = ? AND memory_id IN ({marks}) ORDER BY principal, key",
                              (workspace_id, *ids)):
            keys.setdefault(int(r[0]), []).append(IdempotencyRecord(r[1], r[2], r[3]))
        return [ArchivedMemory(to_detail(r), r["request_hash"], vectors.get(int(r["id"]), []),
                               tuple(keys.get(int(r["id"]), ()))) for r in rows]

    def put_memories(self, workspace_id: str, memories: Sequence[ArchivedMemory]) -> int:
        if not memories:
            return 0
        with self.db.transaction() as conn:
            ids = [m.detail.memory_id for m in memories]
            held = {int(r[0]): r[1] for r in conn.execute(
                f"SELECT id, workspace_id FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids)}
            foreign = sorted(i for i, ws in held.items() if ws != workspace_id)
            if foreign:
                raise Conflict("Memory ids of the archive are held by another workspace of this engine; import "
                               "into an empty engine", details={"memoryIds": foreign[:10]})
            fresh = [m for m in memories if m.detail.memory_id not in held]
            for memory in fresh:
                _insert_memory(conn, workspace_id, memory)
            if fresh:
                for table, column in (("memory_meta", "version"), ("memory_rewrites", "rewrites")):
                    conn.execute(f"INSERT INTO {table} (workspace_id, {column}) VALUES (?, 1) ON CONFLICT"
                                 f" (workspace_id) DO UPDATE SET {column} = {column} + 1", (workspace_id,))
        return len(fresh)

    def remap_decision(self, source_workspace_id: str, workspace_id: str, remap: bool) -> bool:
        with self.db.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO archive_imports VALUES (?, ?, ?)",
                         (source_workspace_id, workspace_id, int(remap)))
            row = conn.execute("SELECT remap FROM archive_imports WHERE source_workspace_id = ? AND workspace_id = ?",
                               (source_workspace_id, workspace_id)).fetchone()
        return bool(row[0])

    def memory_id_map(self, source_workspace_id: str, workspace_id: str,
                      memory_ids: Collection[int]) -> dict[int, int]:
        wanted, pair = sorted(set(memory_ids)), (source_workspace_id, workspace_id)
        if not wanted:
            return {}
        with self.db.transaction() as conn:
            mapped = {int(r[0]): int(r[1]) for r in conn.execute(
                f"SELECT old_id, new_id FROM archive_memory_ids WHERE source_workspace_id = ? AND workspace_id = ?"
                f" AND old_id IN {_IDS}", (*pair, json.dumps(wanted)))}
            taken = {int(r[0]) for r in conn.execute(
                f"SELECT id FROM memories WHERE workspace_id != ? AND id IN {_IDS}",
                (workspace_id, json.dumps(list(mapped.values()))))}
            missing = [old for old in wanted if old not in mapped or mapped[old] in taken]
            if missing:
                top = conn.execute("SELECT max(coalesce((SELECT max(id) FROM memories), 0),"
                                   " coalesce((SELECT max(new_id) FROM archive_memory_ids), 0))").fetchone()[0]
                mapped.update({old: int(top) + 1 + n for n, old in enumerate(missing)})
                conn.executemany("INSERT OR REPLACE INTO archive_memory_ids VALUES (?, ?, ?, ?)",
                                 [(*pair, old, mapped[old]) for old in missing])
        return {old: mapped[old] for old in wanted}

    def snapshot_ids(self, workspace_id: str) -> Iterator[str]:
        after = ""
        while page := [r[0] for r in self.db.connection().execute(
                "SELECT snapshot_id FROM snapshots WHERE workspace_id = ? AND snapshot_id > ? ORDER BY snapshot_id"
                " LIMIT ?", (workspace_id, after, _PAGE))]:
            yield from page
            after = page[-1]

    def traces(self, workspace_id: str) -> Iterator[ArchivedTrace]:
        conn, after = self.db.connection(), ""
        while rows := conn.execute("SELECT request_id, trace FROM recall_traces WHERE workspace_id = ? AND"
                                   " request_id > ? ORDER BY request_id LIMIT ?",
                                   (workspace_id, after, _PAGE)).fetchall():
            for request_id, text in rows:
                usage = tuple((int(r[0]), bool(r[1]), float(r[2])) for r in conn.execute(
                    "SELECT memory_id, used, at FROM recall_usage WHERE request_id = ? ORDER BY memory_id",
                    (request_id,)))
                yield ArchivedTrace(decode_trace(text), usage)
            after = rows[-1][0]

    def put_traces(self, traces: Sequence[ArchivedTrace]) -> int:
        new = 0
        with self.db.transaction() as conn:
            for archived in traces:
                t = archived.trace
                cur = conn.execute("INSERT OR IGNORE INTO recall_traces VALUES (?, ?, ?, ?)",
                                   (t.request_id, t.workspace_id, t.created_at, encode_trace(t)))
                if cur.rowcount:
                    new += 1
                    conn.executemany("INSERT OR IGNORE INTO recall_usage VALUES (?, ?, ?, ?, ?)",
                                     [(t.request_id, m, t.workspace_id, int(used), at) for m, used, at in
                                      archived.usage])
        return new

    def owned_memories(self, workspace_id: str, owner_id: str) -> list[int]:
        return [int(r[0]) for r in self.db.connection().execute(
            "SELECT id FROM memories WHERE workspace_id = ? AND visibility = 'personal' AND owner_id = ? ORDER BY id",
            (workspace_id, owner_id))]

    def forget_principal(self, workspace_id: str, principal_id: str) -> dict[str, int]:
        with self.db.transaction() as conn:
            traces = [r[0] for r in conn.execute(
                "SELECT request_id FROM recall_traces WHERE workspace_id = ? AND"
                " json_extract(trace, '$.principal_id') = ?", (workspace_id, principal_id))]
            usage = 0
            for start in range(0, len(traces), _PAGE):
                marks = ",".join("?" * len(traces[start:start + _PAGE]))
                usage += conn.execute(f"DELETE FROM recall_usage WHERE request_id IN ({marks})",
                                      traces[start:start + _PAGE]).rowcount
                conn.execute(f"DELETE FROM recall_traces WHERE request_id IN ({marks})", traces[start:start + _PAGE])
            keys = conn.execute("DELETE FROM memory_idempotency WHERE workspace_id = ? AND principal = ?",
                                (workspace_id, principal_id)).rowcount
        return {"traces": len(traces), "usage_events": usage, "idempotency_keys": keys}


def _insert_memory(conn: sqlite3.Connection, workspace_id: str, memory: ArchivedMemory) -> None:
    d = memory.detail
    conn.execute(
        f"INSERT INTO memories ({_MEMORY_COLUMNS}) VALUES ({','.join('?' * 26)})",
        (d.memory_id, workspace_id, d.project_id, d.visibility, VISIBILITY_RANK[d.visibility], d.owner_id,
         d.channel_id, d.type, d.name, d.description, d.body, int(d.confirmed), int(d.stale), int(d.superseded),
         d.supersedes, d.revision, d.valid_until, d.sensitivity, d.source, memory.request_hash, d.created_at,
         d.updated_at, json.dumps(list(d.entity_ids)), d.relation_count, d.name_key, d.occurred_at))
    conn.execute("INSERT INTO memory_vectors (id, workspace_id, embedding) VALUES (?, ?, ?)",
                 (d.memory_id, workspace_id, np.asarray(memory.embedding, dtype=np.float32).tobytes()))
    conn.executemany("INSERT OR IGNORE INTO memory_entities VALUES (?, ?, ?)",
                     [(workspace_id, e, d.memory_id) for e in d.entity_ids])
    if d.labels or d.extra:
        conn.execute("INSERT INTO memory_annotations VALUES (?, ?, ?, ?)",
                     (d.memory_id, workspace_id, json.dumps(dict(d.labels)), json.dumps(dict(d.extra))))
    conn.executemany("INSERT OR IGNORE INTO memory_idempotency VALUES (?, ?, ?, ?, ?)",
                     [(workspace_id, k.principal, k.key, k.body_hash, d.memory_id) for k in memory.idempotency])
