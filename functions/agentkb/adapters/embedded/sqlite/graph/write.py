"""Writes of the embedded graph: read the batch's stored state, plan the change set, write it in one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.graph.schema import chunks, rows_by_id
from agentkb.errors import Conflict
from agentkb.models.graph.records import GraphBatch, WriteCounts
from agentkb.models.graph.text import normalise_text
from agentkb.services.graph.changes import (
    EntityChange,
    GraphChangeSet,
    PriorGraph,
    RelationChange,
    alias_names,
    batch_ids,
    plan_upsert,
)


@dataclass(frozen=True, slots=True)
class SqliteGraphWriter:
    """GraphStore.upsert: atomic (one BEGIN IMMEDIATE transaction), change detection by the shared change set."""

    db: Database

    def upsert(self, workspace_id: str, batch: GraphBatch) -> WriteCounts:
        try:
            with self.db.transaction() as conn:
                changes = plan_upsert(batch, self._prior(conn, workspace_id, batch))
                self._write(conn, workspace_id, changes)
        except sqlite3.IntegrityError as exc:  # a concurrent writer took the same identity key first
            raise Conflict("An entity with the same kind and identity key already exists") from exc
        return changes.counts

    def _prior(self, conn: sqlite3.Connection, ws: str, batch: GraphBatch) -> PriorGraph:
        entity_ids, relation_ids, proof_ids = batch_ids(batch)
        return PriorGraph(
            entities={r["id"]: (r["doc"], r["canon"])
                      for r in rows_by_id(conn, "graph_entities", "id, doc, canon", ws, entity_ids)},
            relations={r["id"]: r["canon"]
                       for r in rows_by_id(conn, "graph_relations", "id, canon", ws, relation_ids)},
            proofs={r["id"]: r["canon"] for r in rows_by_id(conn, "graph_proofs", "id, canon", ws, proof_ids)})

    def _write(self, conn: sqlite3.Connection, ws: str, changes: GraphChangeSet) -> None:
        conn.execute("INSERT OR IGNORE INTO graph_meta (workspace_id) VALUES (?)", (ws,))
        self._write_entities(conn, ws, changes)
        self._remove_entities(conn, ws, changes)
        conn.executemany("INSERT INTO graph_term_df VALUES (?,?,?) ON CONFLICT (workspace_id, term)"
                         " DO UPDATE SET df = df + excluded.df", [(ws, t, n) for t, n in changes.df.items()])
        conn.execute("UPDATE graph_meta SET entity_count = entity_count + ? WHERE workspace_id = ?",
                     (changes.entity_count_delta, ws))
        self._write_relations(conn, ws, changes.relations)
        conn.executemany("INSERT INTO graph_proofs VALUES (?,?,?,?) ON CONFLICT (workspace_id, id) DO UPDATE"
                         " SET doc=excluded.doc, canon=excluded.canon",
                         sorted((ws, p.proof.id, p.doc, p.canon) for p in changes.proofs))
        relink = {c.relation.id for c in changes.relations} | self._relation_ids_touching(conn, ws, changes.moved)
        self._refresh_links(conn, ws, sorted(relink))
        if changes.counts.changed:
            conn.execute("UPDATE graph_meta SET version = version + 1 WHERE workspace_id = ?", (ws,))

    @staticmethod
    def _write_entities(conn: sqlite3.Connection, ws: str, changes: GraphChangeSet) -> None:
        if not changes.entities:
            return
        entities: Sequence[EntityChange] = changes.entities
        conn.executemany("DELETE FROM graph_terms WHERE workspace_id = ? AND term = ? AND entity_id = ?",
                         [(ws, term, c.entity.id) for c in entities for term in c.dead_terms])
        conn.executemany("DELETE FROM graph_aliases WHERE workspace_id = ? AND alias_lc = ? AND entity_id = ?",
                         [(ws, a, c.entity.id) for c in entities if c.before for a in alias_names(c.before)])
        conn.executemany(
            "INSERT INTO graph_entities (workspace_id, id, kind, label, label_lc, project_id, identity_key, key_lc,"
            " doc, canon) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (workspace_id, id) DO UPDATE SET kind=excluded.kind,"
            " label=excluded.label, label_lc=excluded.label_lc, project_id=excluded.project_id,"
            " identity_key=excluded.identity_key, key_lc=excluded.key_lc, doc=excluded.doc, canon=excluded.canon",
            [(ws, e.id, e.kind, e.label, normalise_text(e.label), e.project_id or "", e.identity_key,
              normalise_text(e.identity_key), c.doc, c.canon) for c in entities for e in (c.entity,)])
        conn.executemany("INSERT OR IGNORE INTO graph_aliases VALUES (?,?,?)",
                         sorted((ws, a, c.entity.id) for c in entities for a in alias_names(c.entity)))
        conn.executemany("INSERT OR REPLACE INTO graph_terms VALUES (?,?,?,?,?,?,?)", sorted(
            (ws, term, e.id, weight, e.kind, e.label, e.project_id or "")
            for c in entities for e in (c.entity,) for term, weight in c.terms.items()))

    @staticmethod
    def _remove_entities(conn: sqlite3.Connection, ws: str, changes: GraphChangeSet) -> None:
        """Delete removed entities with their postings and aliases (their relations' links are refreshed after)."""
        if not changes.removed:
            return
        for table, column in (("graph_entities", "id"), ("graph_terms", "entity_id"), ("graph_aliases", "entity_id")):
            conn.executemany(f"DELETE FROM {table} WHERE workspace_id = ? AND {column} = ?",
                             [(ws, e.id) for e in changes.removed])

    @staticmethod
    def _write_relations(conn: sqlite3.Connection, ws: str, relations: Sequence[RelationChange]) -> None:
        conn.executemany(
            "INSERT INTO graph_relations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (workspace_id, id) DO UPDATE"
            " SET from_id=excluded.from_id, to_id=excluded.to_id, kind=excluded.kind, derivation=excluded.derivation,"
            " trust=excluded.trust, confidence=excluded.confidence, rank=excluded.rank, weight=excluded.weight,"
            " proven=excluded.proven, proof_ids=excluded.proof_ids, canon=excluded.canon",
            [(ws, r.id, r.from_id, r.to_id, r.kind, r.derivation, r.trust, r.confidence, c.rank, r.weight,
              1 if r.proof_ids else 0, json.dumps(list(r.proof_ids), separators=(",", ":")), c.canon)
             for c in relations for r in (c.relation,)])

    @staticmethod
    def _relation_ids_touching(conn: sqlite3.Connection, ws: str, entity_ids: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for eid in sorted(entity_ids):
            for column in ("from_id", "to_id"):
                out.update(r[0] for r in conn.execute(
                    f"SELECT id FROM graph_relations WHERE workspace_id = ? AND {column} = ?", (ws, eid)))
        return out

    @staticmethod
    def _refresh_links(conn: sqlite3.Connection, ws: str, relation_ids: Sequence[str]) -> None:
        """Project links: a workspace-scope entity joined by a proven relation to an entity of project P."""
        for part in chunks(relation_ids):
            ids = json.dumps(list(part))
            conn.execute("DELETE FROM graph_project_links WHERE workspace_id = ? AND via IN (SELECT value FROM "
                         "json_each(?))", (ws, ids))
            for ws_end, project_end in (("from_id", "to_id"), ("to_id", "from_id")):
                conn.execute(
                    "INSERT OR IGNORE INTO graph_project_links (workspace_id, project_id, entity_id, via)"
                    " SELECT r.workspace_id, b.project_id, a.id, r.id FROM json_each(?) j CROSS JOIN graph_relations r"
                    " ON r.workspace_id = ? AND r.id = j.value AND r.proven = 1"
                    f" JOIN graph_entities a ON a.workspace_id = r.workspace_id AND a.id = r.{ws_end}"
                    f" JOIN graph_entities b ON b.workspace_id = r.workspace_id AND b.id = r.{project_end}"
                    " WHERE a.project_id = '' AND b.project_id <> ''", (ids, ws))
