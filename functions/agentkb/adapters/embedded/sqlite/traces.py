"""Embedded RecallTraceStore: one row per recall (JSON) and one usage row per (recall, memory)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.models.recall.trace import RecallTrace, UsageEvent, apply_usage, decode_trace, encode_trace

register_schema("recall_traces", """
CREATE TABLE IF NOT EXISTS recall_traces (
  request_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL, created_at REAL NOT NULL, trace TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS recall_usage (
  request_id TEXT NOT NULL, memory_id INTEGER NOT NULL, workspace_id TEXT NOT NULL, used INTEGER NOT NULL,
  at REAL NOT NULL, PRIMARY KEY (request_id, memory_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS recall_usage_recent ON recall_usage (workspace_id, at);
""")


class SqliteRecallTraceStore:
    """RecallTraceStore port on the embedded database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def put(self, trace: RecallTrace) -> None:
        self.db.connection().execute("INSERT INTO recall_traces VALUES (?, ?, ?, ?)",
                                     (trace.request_id, trace.workspace_id, trace.created_at, encode_trace(trace)))

    def get(self, request_id: str) -> RecallTrace | None:
        row = self.db.connection().execute("SELECT trace FROM recall_traces WHERE request_id = ?",
                                           (request_id,)).fetchone()
        return decode_trace(row[0]) if row else None

    def record_usage(self, request_id: str, used: Sequence[int], ignored: Mapping[int, str | None],
                     at: float) -> RecallTrace | None:
        with self.db.transaction() as conn:
            row = conn.execute("SELECT trace FROM recall_traces WHERE request_id = ?", (request_id,)).fetchone()
            if row is None:
                return None
            trace, events = apply_usage(decode_trace(row[0]), used, ignored, at)
            conn.execute("UPDATE recall_traces SET trace = ? WHERE request_id = ?", (encode_trace(trace), request_id))
            conn.executemany("INSERT OR REPLACE INTO recall_usage VALUES (?, ?, ?, ?, ?)",
                             [(request_id, e.memory_id, trace.workspace_id, int(e.used), e.at) for e in events])
        return trace

    def usage_events(self, workspace_id: str, since: float, limit: int) -> list[UsageEvent]:
        rows = self.db.connection().execute(
            "SELECT memory_id, used, at FROM recall_usage WHERE workspace_id = ? AND at >= ? ORDER BY at DESC"
            " LIMIT ?", (workspace_id, since, limit))
        return [UsageEvent(int(r[0]), bool(r[1]), float(r[2])) for r in rows]
