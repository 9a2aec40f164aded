"""The embedded graph's tables and the helpers its read, match and write parts share.

Every bound lives in SQL: term matching goes through `graph_terms` (indexed by workspace and term, never a scan of
all entities), neighbourhoods are per-entity `ORDER BY ... LIMIT` on covering indexes, totals are COUNT queries.
`graph_meta.version` moves only when stored content changes; the canonical source hash is cached per version.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from agentkb.models.graph.records import RelationRecord

DDL = """
CREATE TABLE IF NOT EXISTS graph_entities (
  workspace_id TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL, label TEXT NOT NULL, label_lc TEXT NOT NULL,
  project_id TEXT NOT NULL DEFAULT '', identity_key TEXT NOT NULL, key_lc TEXT NOT NULL,
  doc TEXT NOT NULL, canon TEXT NOT NULL, UNIQUE (workspace_id, id));
CREATE INDEX IF NOT EXISTS graph_entities_label ON graph_entities (workspace_id, label_lc);
CREATE INDEX IF NOT EXISTS graph_entities_key ON graph_entities (workspace_id, key_lc);
CREATE UNIQUE INDEX IF NOT EXISTS graph_entities_identity
  ON graph_entities (workspace_id, kind, project_id, identity_key);
CREATE TABLE IF NOT EXISTS graph_aliases (
  workspace_id TEXT NOT NULL, alias_lc TEXT NOT NULL, entity_id TEXT NOT NULL,
  PRIMARY KEY (workspace_id, alias_lc, entity_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_terms (
  workspace_id TEXT NOT NULL, term TEXT NOT NULL, entity_id TEXT NOT NULL, weight INTEGER NOT NULL,
  kind TEXT NOT NULL, label TEXT NOT NULL, project_id TEXT NOT NULL,
  PRIMARY KEY (workspace_id, term, entity_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_term_df (
  workspace_id TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, term)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_relations (
  workspace_id TEXT NOT NULL, id TEXT NOT NULL, from_id TEXT NOT NULL, to_id TEXT NOT NULL, kind TEXT NOT NULL,
  derivation TEXT NOT NULL, trust TEXT NOT NULL, confidence TEXT NOT NULL, rank INTEGER NOT NULL,
  weight REAL NOT NULL, proven INTEGER NOT NULL, proof_ids TEXT NOT NULL, canon TEXT NOT NULL,
  UNIQUE (workspace_id, id));
CREATE INDEX IF NOT EXISTS graph_relations_from ON graph_relations (workspace_id, from_id, proven, rank, id, to_id);
CREATE INDEX IF NOT EXISTS graph_relations_to ON graph_relations (workspace_id, to_id, proven, rank, id, from_id);
CREATE TABLE IF NOT EXISTS graph_proofs (
  workspace_id TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, canon TEXT NOT NULL, UNIQUE (workspace_id, id));
CREATE TABLE IF NOT EXISTS graph_project_links (
  workspace_id TEXT NOT NULL, project_id TEXT NOT NULL, entity_id TEXT NOT NULL, via TEXT NOT NULL,
  PRIMARY KEY (workspace_id, project_id, entity_id, via)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_project_links_via ON graph_project_links (workspace_id, via);
CREATE TABLE IF NOT EXISTS graph_format (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS graph_meta (
  workspace_id TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0, entity_count INTEGER NOT NULL DEFAULT 0,
  hash TEXT, hash_version INTEGER NOT NULL DEFAULT -1);
"""

CHUNK = 500
REL_COLUMNS = "id, from_id, to_id, kind, derivation, trust, confidence, weight, proof_ids"


def chunks(items: Sequence[Any], size: int = CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def marks(n: int) -> str:
    return ",".join("?" * n)


def relation_from_row(row: sqlite3.Row) -> RelationRecord:
    return RelationRecord(id=row["id"], from_id=row["from_id"], to_id=row["to_id"], kind=row["kind"],
                          derivation=row["derivation"], trust=row["trust"], confidence=row["confidence"],
                          weight=row["weight"], proof_ids=tuple(json.loads(row["proof_ids"])))


def rows_by_id(conn: sqlite3.Connection, table: str, columns: str, ws: str,
               ids: Sequence[str]) -> Iterator[sqlite3.Row]:
    """Rows of `table` with the given ids (chunked IN lists), in no particular order."""
    for part in chunks(list(dict.fromkeys(ids))):
        yield from conn.execute(f"SELECT {columns} FROM {table} WHERE workspace_id = ? AND id IN "
                                f"({marks(len(part))})", (ws, *part))
