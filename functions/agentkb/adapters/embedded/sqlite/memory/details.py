"""The embedded memory store's non-recall SQL: one memory in full, listings, in-place changes and deletes.

Changes and deletes bump `memory_rewrites` as well as `memory_meta.version`, so the cached vector matrix and facet
columns of the workspace are rebuilt rather than appended to. The FTS5 table has external content: a changed
text is deleted from it with the old values and inserted with the new ones here (the triggers cover insert and
delete only).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import numpy as np

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.eligibility import clause_sql
from agentkb.models.eligibility import LISTING_STATUS
from agentkb.models.memory.api import VISIBILITY_RANK
from agentkb.models.memory.detail import MemoryChange, MemoryDetail, MemoryListQuery, name_key

# The owner rule with the viewer bound twice (positional): no viewer reads every memory.
OWNER_RULE = "(? IS NULL OR m.visibility != 'personal' OR m.owner_id = ?)"


def detail_sql() -> str:
    return ("SELECT m.*, a.labels AS a_labels, a.extra AS a_extra FROM memories m"
            " LEFT JOIN memory_annotations a ON a.id = m.id")


def to_detail(row: sqlite3.Row) -> MemoryDetail:
    return MemoryDetail(
        memory_id=int(row["id"]), workspace_id=row["workspace_id"], project_id=row["project_id"],
        visibility=row["visibility"], owner_id=row["owner_id"], channel_id=row["channel_id"], type=row["type"],
        name=row["name"], description=row["description"], body=row["body"], confirmed=bool(row["confirmed"]),
        stale=bool(row["stale"]), superseded=bool(row["superseded"]), revision=int(row["revision"]),
        supersedes=row["supersedes"], valid_until=row["valid_until"], sensitivity=int(row["sensitivity"]),
        source=row["source"], created_at=row["created_at"], updated_at=float(row["updated_at"]),
        entity_ids=tuple(json.loads(row["entity_ids"])), relation_count=int(row["relation_count"]),
        occurred_at=row["occurred_at"], labels=json.loads(row["a_labels"] or "{}"),
        extra=json.loads(row["a_extra"] or "{}"))


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def list_sql(query: MemoryListQuery) -> tuple[str, dict[str, Any]]:
    """Newest first, one row more than the page (to know whether another page follows)."""
    clauses = ["m.workspace_id = :ws"]
    params: dict[str, Any] = {"ws": query.workspace_id, "limit": query.limit + 1}
    for column in ("project_id", "type"):
        if getattr(query, column) is not None:
            clauses.append(f"m.{column} = :{column}")
            params[column] = getattr(query, column)
    if query.name_prefix is not None:
        clauses.append("m.name LIKE :name_prefix ESCAPE '\\'")
        params["name_prefix"] = _escape_like(query.name_prefix)
    if query.status is not None:
        clauses.append(clause_sql(LISTING_STATUS[query.status], params))
    for position, (label, value) in enumerate(sorted(query.labels.items())):
        clauses.append(f"json_extract(a.labels, :lk{position}) = :lv{position}")
        params.update({f"lk{position}": f'$."{label}"', f"lv{position}": value})
    if query.label_prefix is not None:
        clauses.append("json_extract(a.labels, :pk) LIKE :pv ESCAPE '\\'")
        params.update({"pk": f'$."{query.label_prefix[0]}"', "pv": _escape_like(query.label_prefix[1])})
    if query.viewer is not None:
        clauses.append("(m.visibility != 'personal' OR m.owner_id = :viewer)")
        params["viewer"] = query.viewer
    if query.before_id is not None:
        clauses.append("m.id < :before")
        params["before"] = query.before_id
    return f"{detail_sql()} WHERE {' AND '.join(clauses)} ORDER BY m.id DESC LIMIT :limit", params


def _bump(conn: sqlite3.Connection, ws: str) -> None:
    conn.execute("INSERT INTO memory_meta (workspace_id, version) VALUES (?, 1) ON CONFLICT (workspace_id)"
                 " DO UPDATE SET version = version + 1", (ws,))
    conn.execute("INSERT INTO memory_rewrites (workspace_id, rewrites) VALUES (?, 1) ON CONFLICT (workspace_id)"
                 " DO UPDATE SET rewrites = rewrites + 1", (ws,))


def update_memory(conn: sqlite3.Connection, ws: str, memory_id: int, change: MemoryChange) -> bool:
    """Apply a change to one memory inside the caller's transaction; False when it does not exist."""
    old = conn.execute("SELECT * FROM memories WHERE workspace_id = ? AND id = ?", (ws, memory_id)).fetchone()
    if old is None:
        return False
    sets: dict[str, Any] = {}
    for column in ("confirmed", "stale"):
        if getattr(change, column) is not None:
            sets[column] = int(getattr(change, column))
    if change.visibility is not None:
        sets.update(visibility=change.visibility, vis_rank=VISIBILITY_RANK[change.visibility])
    for column in ("owner_id", "description", "body", "updated_at"):
        if getattr(change, column) is not None:
            sets[column] = getattr(change, column)
    if "visibility" in sets or "owner_id" in sets:  # the name moves to the new namespace (taken there: Conflict)
        sets["name_key"] = name_key(sets.get("visibility", old["visibility"]), sets.get("owner_id", old["owner_id"]),
                                    old["name"])
    if sets:
        conn.execute(f"UPDATE memories SET {', '.join(f'{c} = :{c}' for c in sets)} WHERE id = :id",
                     {**sets, "id": memory_id})
    if "description" in sets or "body" in sets:
        conn.execute("INSERT INTO memories_fts(memories_fts, rowid, name, description, body)"
                     " VALUES ('delete', ?, ?, ?, ?)", (memory_id, old["name"], old["description"], old["body"]))
        conn.execute("INSERT INTO memories_fts(rowid, name, description, body) SELECT id, name, description, body"
                     " FROM memories WHERE id = ?", (memory_id,))
    if change.embedding is not None:
        conn.execute("UPDATE memory_vectors SET embedding = ? WHERE id = ?",
                     (np.asarray(change.embedding, dtype=np.float32).tobytes(), memory_id))
    if change.labels is not None or change.extra is not None:
        current = conn.execute("SELECT labels, extra FROM memory_annotations WHERE id = ?", (memory_id,)).fetchone()
        labels = change.labels if change.labels is not None else json.loads(current[0] if current else "{}")
        extra = change.extra if change.extra is not None else json.loads(current[1] if current else "{}")
        conn.execute("INSERT OR REPLACE INTO memory_annotations VALUES (?, ?, ?, ?)",
                     (memory_id, ws, json.dumps(dict(labels)), json.dumps(dict(extra))))
    _bump(conn, ws)
    return True


def delete_memory(conn: sqlite3.Connection, ws: str, memory_id: int) -> list[int]:
    """Delete every revision of the memory's name inside the caller's transaction; the ids deleted."""
    row = conn.execute("SELECT name_key FROM memories WHERE workspace_id = ? AND id = ?", (ws, memory_id)).fetchone()
    if row is None:
        return []
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM memories WHERE workspace_id = ? AND name_key = ?",
                                           (ws, row["name_key"]))]
    marks = ",".join("?" * len(ids))
    for table, column in (("memory_vectors", "id"), ("memory_entities", "memory_id"),
                          ("memory_idempotency", "memory_id"), ("memory_annotations", "id"), ("memories", "id")):
        conn.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", ids)
    _bump(conn, ws)
    return ids


def migrate_name_keys(db: Database) -> None:
    """Databases from before per-owner names: key every row (personal names by owner), then swap the unique index
    from (workspace, name) to (workspace, name_key). Idempotent; one transaction."""
    with db.transaction() as conn:
        rows = conn.execute("SELECT id, visibility, owner_id, name FROM memories WHERE name_key IS NULL").fetchall()
        conn.executemany("UPDATE memories SET name_key = ? WHERE id = ?",
                         [(name_key(r["visibility"], r["owner_id"], r["name"]), r["id"]) for r in rows])
        conn.execute("DROP INDEX IF EXISTS memories_live_name")
        conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS memories_live_key ON memories (workspace_id, name_key)"
                     " WHERE superseded = 0")
