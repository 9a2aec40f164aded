"""Reads of the embedded graph: records by id, capped neighbourhoods, exact totals, the cached source hash."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.graph.schema import REL_COLUMNS, relation_from_row, rows_by_id
from agentkb.models.graph.records import EntityRecord, NeighbourhoodTotals, ProofRecord, RelationRecord
from agentkb.services.graph.changes import decode_entity, decode_proof, in_order, source_hash


@dataclass(frozen=True, slots=True)
class SqliteGraphReader:
    """GraphStore reads."""

    db: Database

    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return {r[0] for r in rows_by_id(self.db.connection(), "graph_entities", "id", workspace_id, ids)}

    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return {r[0] for r in rows_by_id(self.db.connection(), "graph_proofs", "id", workspace_id, ids)}

    def identity_owners(self, workspace_id: str,
                        identities: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        conn = self.db.connection()
        out: dict[tuple[str, str, str], str] = {}
        for kind, project, key in dict.fromkeys(identities):
            row = conn.execute("SELECT id FROM graph_entities WHERE workspace_id = ? AND kind = ? AND project_id = ?"
                               " AND identity_key = ?", (workspace_id, kind, project, key)).fetchone()
            if row is not None:
                out[(kind, project, key)] = row[0]
        return out

    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[EntityRecord]:
        rows = rows_by_id(self.db.connection(), "graph_entities", "id, doc", workspace_id, ids)
        return in_order(ids, {r["id"]: decode_entity(r["doc"]) for r in rows})

    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[ProofRecord]:
        rows = rows_by_id(self.db.connection(), "graph_proofs", "id, doc", workspace_id, ids)
        return in_order(ids, {r["id"]: decode_proof(r["doc"]) for r in rows})

    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[RelationRecord]]:
        conn = self.db.connection()
        sql = (f"SELECT * FROM (SELECT {REL_COLUMNS}, rank FROM graph_relations WHERE workspace_id = :ws"
               " AND from_id = :e AND proven = 1 ORDER BY rank, id LIMIT :cap)"
               f" UNION ALL SELECT * FROM (SELECT {REL_COLUMNS}, rank FROM graph_relations WHERE workspace_id = :ws"
               " AND to_id = :e AND proven = 1 AND from_id <> :e ORDER BY rank, id LIMIT :cap)"
               " ORDER BY rank, id LIMIT :cap")
        return {eid: [relation_from_row(r) for r in conn.execute(
            sql, {"ws": workspace_id, "e": eid, "cap": per_entity_cap})] for eid in dict.fromkeys(entity_ids)}

    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> NeighbourhoodTotals:
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return NeighbourhoodTotals(0, 0)
        # Covering index scans only (the other endpoint is in the index), no temp tables for the relation count.
        conn, ids_json = self.db.connection(), json.dumps(ids)
        inside = "(SELECT value FROM json_each(:ids))"
        out_edges = (f"FROM graph_relations WHERE workspace_id = :ws AND from_id IN {inside} AND proven = 1")
        in_edges = (f"FROM graph_relations WHERE workspace_id = :ws AND to_id IN {inside} AND proven = 1"
                    f" AND from_id NOT IN {inside}")
        args = {"ws": workspace_id, "ids": ids_json}
        relations = (conn.execute(f"SELECT COUNT(*) {out_edges}", args).fetchone()[0]
                     + conn.execute(f"SELECT COUNT(*) {in_edges}", args).fetchone()[0])
        related = conn.execute(f"SELECT COUNT(*) FROM (SELECT to_id {out_edges} AND to_id NOT IN {inside}"
                               f" UNION SELECT from_id {in_edges})", args).fetchone()[0]
        return NeighbourhoodTotals(relations, related)

    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], min_weight: float,
                   per_entity_cap: int) -> list[tuple[str, str, str, float]]:
        conn = self.db.connection()
        sql = ("SELECT * FROM (SELECT from_id, to_id, kind, weight, id FROM graph_relations WHERE workspace_id = :ws"
               " AND from_id = :e AND weight >= :w ORDER BY weight DESC, id LIMIT :cap)"
               " UNION ALL SELECT * FROM (SELECT from_id, to_id, kind, weight, id FROM graph_relations"
               " WHERE workspace_id = :ws AND to_id = :e AND from_id <> :e AND weight >= :w"
               " ORDER BY weight DESC, id LIMIT :cap) ORDER BY weight DESC, id LIMIT :cap")
        out: list[tuple[str, str, str, float]] = []
        for eid in dict.fromkeys(entity_ids):
            out.extend((r[0], r[1], r[2], r[3]) for r in conn.execute(
                sql, {"ws": workspace_id, "e": eid, "w": min_weight, "cap": per_entity_cap}))
        return out

    def source_hash(self, workspace_id: str) -> str:
        conn = self.db.connection()
        meta = "SELECT version, hash, hash_version FROM graph_meta WHERE workspace_id = ?"
        row = conn.execute(meta, (workspace_id,)).fetchone()
        if row is not None and row["hash"] is not None and row["hash_version"] == row["version"]:
            return str(row["hash"])
        conn.execute("BEGIN")  # one read snapshot: the hash and the version it belongs to agree
        try:
            row = conn.execute(meta, (workspace_id,)).fetchone()
            version = row["version"] if row is not None else 0
            digest = self._compute_hash(conn, workspace_id)
        finally:
            conn.execute("COMMIT")
        if row is not None:
            conn.execute("UPDATE graph_meta SET hash = ?, hash_version = ? WHERE workspace_id = ? AND version = ?",
                         (digest, version, workspace_id, version))
        return digest

    @staticmethod
    def _compute_hash(conn: sqlite3.Connection, ws: str) -> str:
        return source_hash(*((canon for (canon,) in conn.execute(
            f"SELECT canon FROM {table} WHERE workspace_id = ?{only} ORDER BY id", (ws,)))
            for table, only in (("graph_entities", ""), ("graph_proofs", ""), ("graph_relations", " AND proven = 1"))))

    def workspaces(self) -> list[str]:
        return [r[0] for r in self.db.connection().execute("SELECT workspace_id FROM graph_meta ORDER BY 1")]

    def export(self, workspace_id: str) -> tuple[list[str], list[RelationRecord], list[str]]:
        conn, ws = self.db.connection(), (workspace_id,)
        entities = [r[0] for r in conn.execute("SELECT doc FROM graph_entities WHERE workspace_id = ? ORDER BY id", ws)]
        relations = [relation_from_row(r) for r in conn.execute(
            f"SELECT {REL_COLUMNS} FROM graph_relations WHERE workspace_id = ? ORDER BY id", ws)]
        proofs = [r[0] for r in conn.execute("SELECT doc FROM graph_proofs WHERE workspace_id = ? ORDER BY id", ws)]
        return entities, relations, proofs

    def export_ids(self, workspace_id: str, kind: str, after: str, limit: int) -> list[str]:
        table = {"entities": "graph_entities", "proofs": "graph_proofs"}[kind]
        return [r[0] for r in self.db.connection().execute(
            f"SELECT id FROM {table} WHERE workspace_id = ? AND id > ? ORDER BY id LIMIT ?",
            (workspace_id, after, limit))]

    def export_relations(self, workspace_id: str, after: str, limit: int) -> list[RelationRecord]:
        return [relation_from_row(r) for r in self.db.connection().execute(
            f"SELECT {REL_COLUMNS} FROM graph_relations WHERE workspace_id = ? AND id > ? ORDER BY id LIMIT ?",
            (workspace_id, after, limit))]
