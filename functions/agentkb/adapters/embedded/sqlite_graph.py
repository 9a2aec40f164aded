"""The embedded engine's knowledge graph: entities, relations, proofs, a term index with document frequencies.

Every bound lives in SQL: term matching goes through `graph_terms` (indexed by workspace and term, never a scan of
all entities), neighbourhoods are per-entity `ORDER BY ... LIMIT` on covering indexes, totals are COUNT queries.
`graph_meta.version` moves only when stored content changes; the canonical source hash is cached per version.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from agentkb.adapters.embedded.sqlite_db import Database, register_schema
from agentkb.errors import Conflict
from agentkb.models.graph import (
    CONFIDENCE_LEVELS,
    TRUST_LEVELS,
    EntityRecord,
    GraphBatch,
    GraphMatch,
    GraphMatchPage,
    GraphMatchQuery,
    NeighbourhoodTotals,
    ProofRecord,
    RelationRecord,
    WriteCounts,
    canonical_json,
    entity_terms,
    normalise_text,
)

_DDL = """
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
CREATE TABLE IF NOT EXISTS graph_meta (
  workspace_id TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0, entity_count INTEGER NOT NULL DEFAULT 0,
  hash TEXT, hash_version INTEGER NOT NULL DEFAULT -1);
"""
register_schema("graph", _DDL)

_CHUNK = 500
_CONFIDENCE_WEIGHT = {"high": 1.0, "medium": 0.6, "low": 0.3}
_REL_COLUMNS = "id, from_id, to_id, kind, derivation, trust, confidence, weight, proof_ids"


def relation_rank(trust: str, confidence: str) -> int:
    """Sort key of a relation: authoritative/high first."""
    t = TRUST_LEVELS.index(trust) if trust in TRUST_LEVELS else len(TRUST_LEVELS)
    c = CONFIDENCE_LEVELS.index(confidence) if confidence in CONFIDENCE_LEVELS else len(CONFIDENCE_LEVELS)
    return t * 4 + c


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _entity_from_doc(doc: dict[str, Any]) -> EntityRecord:
    identity = doc["identity"]
    return EntityRecord(id=doc["id"], kind=doc["kind"], label=doc["label"], project_id=doc.get("projectId"),
                        identity_key=identity["key"], identity_scope=identity["scope"],
                        aliases=tuple(identity["aliases"]), fingerprint=identity["fingerprint"],
                        attributes=doc["attributes"], proof_ids=tuple(doc["proofIds"]))


def _relation_from_row(row: sqlite3.Row) -> RelationRecord:
    return RelationRecord(id=row["id"], from_id=row["from_id"], to_id=row["to_id"], kind=row["kind"],
                          derivation=row["derivation"], trust=row["trust"], confidence=row["confidence"],
                          weight=row["weight"], proof_ids=tuple(json.loads(row["proof_ids"])))


class SqliteGraphStore:
    """GraphStore over the shared embedded database."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # ---- writes ----------------------------------------------------------------------------------------------

    def upsert(self, workspace_id: str, batch: GraphBatch) -> WriteCounts:
        try:
            return self._upsert(workspace_id, batch)
        except sqlite3.IntegrityError as exc:  # a concurrent writer took the same identity key first
            raise Conflict("An entity with the same kind and identity key already exists") from exc

    def _upsert(self, workspace_id: str, batch: GraphBatch) -> WriteCounts:
        with self._db.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO graph_meta (workspace_id) VALUES (?)", (workspace_id,))
            changed_entities, moved = self._write_entities(conn, workspace_id, batch.entities)
            changed_rel = self._write_relations(conn, workspace_id, batch.relations)
            changed_proofs = self._write_proofs(conn, workspace_id, batch.proofs)
            relink = set(changed_rel)
            if moved:
                relink |= self._relation_ids_touching(conn, workspace_id, moved)
            self._refresh_links(conn, workspace_id, sorted(relink))
            changed = bool(changed_entities or changed_rel or changed_proofs)
            if changed:
                conn.execute("UPDATE graph_meta SET version = version + 1 WHERE workspace_id = ?", (workspace_id,))
        return WriteCounts(len({e.id for e in batch.entities}), len({r.id for r in batch.relations}),
                           len({p.id for p in batch.proofs}), changed)

    def upsert_entity_by_identity(self, workspace_id: str, entity: EntityRecord) -> str:
        key = (entity.kind, entity.project_id or "", entity.identity_key)
        existing = self.identity_owners(workspace_id, [key]).get(key)
        if existing is not None and existing != entity.id:
            entity = EntityRecord(**{**_record_fields(entity), "id": existing})
        self.upsert(workspace_id, GraphBatch(entities=(entity,)))
        return entity.id

    def _write_entities(self, conn: sqlite3.Connection, ws: str,
                        entities: Sequence[EntityRecord]) -> tuple[int, set[str]]:
        """Upsert changed entities: (how many changed, ids whose project moved so their links need a refresh)."""
        latest = {e.id: e for e in entities}
        if not latest:
            return 0, set()
        old: dict[str, tuple[str, str]] = {}
        for part in _chunks(list(latest)):
            for row in conn.execute(f"SELECT id, doc, canon FROM graph_entities WHERE workspace_id = ? "
                                    f"AND id IN ({_marks(len(part))})", (ws, *part)):
                old[row["id"]] = (row["doc"], row["canon"])
        rows: list[Any] = []
        aliases: list[Any] = []
        terms: list[Any] = []
        dead_terms: list[Any] = []
        dead_aliases: list[Any] = []
        df: Counter[str] = Counter()
        moved: set[str] = set()
        added = 0
        for entity in latest.values():
            doc = entity.doc()
            canon = canonical_json(doc)
            previous = old.get(entity.id)
            if previous is not None and previous[1] == canon:
                continue
            if previous is None:
                added += 1
            else:
                before = _entity_from_doc(json.loads(previous[0]))
                for term in entity_terms(before):
                    dead_terms.append((ws, term, entity.id))
                    df[term] -= 1
                dead_aliases.extend((ws, normalise_text(a), entity.id) for a in before.aliases)
                if (before.project_id or "") != (entity.project_id or ""):
                    moved.add(entity.id)
            rows.append((ws, entity.id, entity.kind, entity.label, normalise_text(entity.label),
                         entity.project_id or "", entity.identity_key, normalise_text(entity.identity_key),
                         json.dumps(doc, ensure_ascii=False, separators=(",", ":")), canon))
            aliases.extend((ws, alias, entity.id) for alias in {normalise_text(a) for a in entity.aliases})
            for term, weight in entity_terms(entity).items():
                terms.append((ws, term, entity.id, weight, entity.kind, entity.label, entity.project_id or ""))
                df[term] += 1
        if not rows:
            return 0, moved
        conn.executemany("DELETE FROM graph_terms WHERE workspace_id = ? AND term = ? AND entity_id = ?", dead_terms)
        conn.executemany("DELETE FROM graph_aliases WHERE workspace_id = ? AND alias_lc = ? AND entity_id = ?",
                         dead_aliases)
        conn.executemany(
            "INSERT INTO graph_entities (workspace_id, id, kind, label, label_lc, project_id, identity_key, key_lc,"
            " doc, canon) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT (workspace_id, id) DO UPDATE SET kind=excluded.kind,"
            " label=excluded.label, label_lc=excluded.label_lc, project_id=excluded.project_id,"
            " identity_key=excluded.identity_key, key_lc=excluded.key_lc, doc=excluded.doc, canon=excluded.canon",
            rows)
        conn.executemany("INSERT OR IGNORE INTO graph_aliases VALUES (?,?,?)", sorted(aliases))
        conn.executemany("INSERT OR REPLACE INTO graph_terms VALUES (?,?,?,?,?,?,?)", sorted(terms))
        conn.executemany(
            "INSERT INTO graph_term_df VALUES (?,?,?) ON CONFLICT (workspace_id, term)"
            " DO UPDATE SET df = df + excluded.df",
            sorted((ws, term, n) for term, n in df.items() if n))
        conn.execute("UPDATE graph_meta SET entity_count = entity_count + ? WHERE workspace_id = ?", (added, ws))
        return len(rows), moved

    def _write_relations(self, conn: sqlite3.Connection, ws: str, relations: Sequence[RelationRecord]) -> list[str]:
        latest = {r.id: r for r in relations}
        old: dict[str, str] = {}
        for part in _chunks(list(latest)):
            for row in conn.execute(f"SELECT id, canon FROM graph_relations WHERE workspace_id = ? "
                                    f"AND id IN ({_marks(len(part))})", (ws, *part)):
                old[row["id"]] = row["canon"]
        rows = []
        for rel in latest.values():
            weight = rel.weight if rel.weight is not None else _CONFIDENCE_WEIGHT.get(rel.confidence, 0.5)
            canon = canonical_json({**rel.doc(), "weight": weight})
            if old.get(rel.id) == canon:
                continue
            rows.append((ws, rel.id, rel.from_id, rel.to_id, rel.kind, rel.derivation, rel.trust, rel.confidence,
                         relation_rank(rel.trust, rel.confidence), weight, 1 if rel.proof_ids else 0,
                         json.dumps(list(rel.proof_ids), separators=(",", ":")), canon))
        rows.sort(key=lambda r: r[1])
        conn.executemany(
            "INSERT INTO graph_relations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (workspace_id, id) DO UPDATE"
            " SET from_id=excluded.from_id, to_id=excluded.to_id, kind=excluded.kind, derivation=excluded.derivation,"
            " trust=excluded.trust, confidence=excluded.confidence, rank=excluded.rank, weight=excluded.weight,"
            " proven=excluded.proven, proof_ids=excluded.proof_ids, canon=excluded.canon", rows)
        return [r[1] for r in rows]

    def _write_proofs(self, conn: sqlite3.Connection, ws: str, proofs: Sequence[ProofRecord]) -> int:
        """Upsert every proof (observedAt may move); returns how many changed their timestamp-free content."""
        latest = {p.id: p for p in proofs}
        old: dict[str, str] = {}
        for part in _chunks(list(latest)):
            for row in conn.execute(f"SELECT id, canon FROM graph_proofs WHERE workspace_id = ? "
                                    f"AND id IN ({_marks(len(part))})", (ws, *part)):
                old[row["id"]] = row["canon"]
        rows = [(ws, p.id, json.dumps(p.doc(), ensure_ascii=False, separators=(",", ":")),
                 canonical_json(p.doc(with_timestamp=False))) for p in latest.values()]
        conn.executemany("INSERT INTO graph_proofs VALUES (?,?,?,?) ON CONFLICT (workspace_id, id) DO UPDATE"
                         " SET doc=excluded.doc, canon=excluded.canon", sorted(rows))
        return sum(1 for r in rows if old.get(r[1]) != r[3])

    def _relation_ids_touching(self, conn: sqlite3.Connection, ws: str, entity_ids: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for eid in entity_ids:
            for column in ("from_id", "to_id"):
                out.update(r[0] for r in conn.execute(
                    f"SELECT id FROM graph_relations WHERE workspace_id = ? AND {column} = ?", (ws, eid)))
        return out

    def _refresh_links(self, conn: sqlite3.Connection, ws: str, relation_ids: Sequence[str]) -> None:
        """Project links: a workspace-scope entity joined by a proven relation to an entity of project P."""
        for part in _chunks(relation_ids):
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

    # ---- reads -----------------------------------------------------------------------------------------------

    def _ids_in(self, table: str, ws: str, ids: Sequence[str]) -> set[str]:
        conn = self._db.connection()
        found: set[str] = set()
        for part in _chunks(list(dict.fromkeys(ids))):
            found.update(r[0] for r in conn.execute(
                f"SELECT id FROM {table} WHERE workspace_id = ? AND id IN ({_marks(len(part))})", (ws, *part)))
        return found

    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return self._ids_in("graph_entities", workspace_id, ids)

    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return self._ids_in("graph_proofs", workspace_id, ids)

    def identity_owners(self, workspace_id: str,
                        identities: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        conn = self._db.connection()
        out: dict[tuple[str, str, str], str] = {}
        for kind, project, key in dict.fromkeys(identities):
            row = conn.execute("SELECT id FROM graph_entities WHERE workspace_id = ? AND kind = ? AND project_id = ?"
                               " AND identity_key = ?", (workspace_id, kind, project, key)).fetchone()
            if row is not None:
                out[(kind, project, key)] = row[0]
        return out

    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        conn = self._db.connection()
        row = conn.execute("SELECT entity_count FROM graph_meta WHERE workspace_id = ?", (workspace_id,)).fetchone()
        df = {r[0]: r[1] for r in conn.execute(
            f"SELECT term, df FROM graph_term_df WHERE workspace_id = ? AND term IN ({_marks(len(terms))})",
            (workspace_id, *terms))} if terms else {}
        return (row[0] if row else 0), df

    def match_entities(self, query: GraphMatchQuery) -> GraphMatchPage:
        # Postings carry kind, label and project (denormalised) so ranking and scoping never join graph_entities
        # for every posting of a common term; the exact/prefix tiers are small index range reads merged here.
        conn = self._db.connection()
        params: dict[str, Any] = {"ws": query.workspace_id, "t": query.text, "hi": query.text + "\U0010ffff",
                                  "bonus": query.coverage_bonus, "kind": query.kind, "project": query.project_id}
        named = self._named_matches(conn, query, params)
        scores = self._term_scores(conn, query, params, list(named)) if named else {}
        # Named matches outrank every term-only match, so at most `limit` of them can push term matches out.
        top, term_total = self._term_matches(conn, query, params,
                                             query.limit + len(named) if len(named) < query.limit else 0)
        rows = [(-tier, -scores.get(i, (0, 0))[0], kind, label, i) for i, (tier, kind, label) in named.items()]
        rows += [(-1, -score, kind, label, i) for i, score, kind, label in top if i not in named]
        rows.sort()
        total = term_total + sum(1 for i in named if scores.get(i, (0, 0))[1] == 0)
        return GraphMatchPage(total, tuple(GraphMatch(r[4], -r[0], -r[1]) for r in rows[:query.limit]))

    @staticmethod
    def _scope(query: GraphMatchQuery, alias: str) -> str:
        scope = ""
        if query.kind is not None:  # unary + keeps the planner on the label/key/term index, not the kind one
            scope += f" AND +{alias}.kind = :kind"
        if query.project_id is not None:
            scope += (f" AND ({alias}.project_id = :project OR ({alias}.project_id = '' AND EXISTS (SELECT 1 FROM"
                      f" graph_project_links l WHERE l.workspace_id = :ws AND l.project_id = :project"
                      f" AND l.entity_id = {alias}.{'entity_id' if alias == 't' else 'id'})))")
        return scope

    def _named_matches(self, conn: sqlite3.Connection, query: GraphMatchQuery,
                       params: dict[str, Any]) -> dict[str, tuple[int, str, str]]:
        """Exact (3) and prefix (2) matches of label, identity key or alias: id -> (tier, kind, label)."""
        cols, scope = "e.id, e.kind, e.label", self._scope(query, "e")
        aliased = (" FROM graph_aliases a JOIN graph_entities e"
                   " ON e.workspace_id = a.workspace_id AND e.id = a.entity_id")
        legs = [
            f"SELECT 3, {cols} FROM graph_entities e WHERE e.workspace_id = :ws AND e.label_lc = :t{scope}",
            f"SELECT 3, {cols} FROM graph_entities e WHERE e.workspace_id = :ws AND e.key_lc = :t{scope}",
            f"SELECT 3, {cols}{aliased} WHERE a.workspace_id = :ws AND a.alias_lc = :t{scope}",
            f"SELECT 2, {cols} FROM graph_entities e WHERE e.workspace_id = :ws AND e.label_lc > :t"
            f" AND e.label_lc < :hi{scope}",
            f"SELECT 2, {cols} FROM graph_entities e WHERE e.workspace_id = :ws AND e.key_lc > :t"
            f" AND e.key_lc < :hi{scope}",
            f"SELECT 2, {cols}{aliased} WHERE a.workspace_id = :ws AND a.alias_lc > :t AND a.alias_lc < :hi{scope}",
        ]
        out: dict[str, tuple[int, str, str]] = {}
        for tier, eid, kind, label in conn.execute(" UNION ALL ".join(legs), params):
            if eid not in out or out[eid][0] < tier:
                out[eid] = (tier, kind, label)
        return out

    @staticmethod
    def _weights_sql(terms: Sequence[tuple[str, int]], params: dict[str, Any], prefix: str) -> str:
        for i, (term, weight) in enumerate(terms):
            params[f"{prefix}{i}"], params[f"{prefix}w{i}"] = term, weight
        return ",".join(f"(:{prefix}{i}, :{prefix}w{i})" for i in range(len(terms)))

    def _term_scores(self, conn: sqlite3.Connection, query: GraphMatchQuery, params: dict[str, Any],
                     ids: list[str]) -> dict[str, tuple[int, int]]:
        """Term score and matching-term count of given entities (the exact/prefix ones)."""
        terms = (*query.matching_terms, *query.boost_terms)
        if not terms:
            return {}
        values = self._weights_sql(terms, params, "s")
        matching = {t for t, _ in query.matching_terms}
        out: dict[str, tuple[int, int]] = {}
        sql = (f"SELECT t.entity_id, t.term, q.column2 * t.weight FROM (VALUES {values}) q JOIN graph_terms t"
               " ON t.workspace_id = :ws AND t.term = q.column1 AND t.entity_id IN (SELECT value FROM json_each(:ids))")
        for eid, term, score in conn.execute(sql, {**params, "ids": json.dumps(ids)}):
            total, hits = out.get(eid, (0, 0))
            out[eid] = (total + score + query.coverage_bonus, hits + (term in matching))
        return out

    def _term_matches(self, conn: sqlite3.Connection, query: GraphMatchQuery, params: dict[str, Any],
                      limit: int) -> tuple[list[tuple[str, int, str, str]], int]:
        """Best `limit` term matches (id, score, kind, label) and the count of all term matches."""
        if not query.matching_terms:
            return [], 0
        values = self._weights_sql(query.matching_terms, params, "m")
        scope = self._scope(query, "t")
        postings = (f"FROM (VALUES {values}) q JOIN graph_terms t ON t.workspace_id = :ws AND t.term = q.column1"
                    f" WHERE 1 = 1{scope}")
        boost = "0"
        if query.boost_terms:
            bvalues = self._weights_sql(query.boost_terms, params, "b")
            boost = (f"COALESCE((SELECT SUM(b.column2 * u.weight + :bonus) FROM (VALUES {bvalues}) b JOIN graph_terms u"
                     " ON u.workspace_id = :ws AND u.term = b.column1 AND u.entity_id = c.id), 0)")
        if len(query.matching_terms) == 1:  # one posting per entity: no grouping, a bounded sort of the postings
            inner = f"SELECT t.entity_id AS id, q.column2 * t.weight + :bonus AS s, t.kind, t.label {postings}"
        else:
            inner = (f"SELECT t.entity_id AS id, SUM(q.column2 * t.weight) + :bonus * COUNT(*) AS s, t.kind, t.label"
                     f" {postings} GROUP BY t.entity_id")
        sql = (f"SELECT c.id, c.s + {boost} AS score, c.kind, c.label FROM ({inner}) c"
               " ORDER BY score DESC, c.kind, c.label, c.id LIMIT :limit")
        top = [tuple(r) for r in conn.execute(sql, {**params, "limit": limit})] if limit else []
        count_sql = (f"SELECT COUNT(*) {postings}" if len(query.matching_terms) == 1
                     else f"SELECT COUNT(DISTINCT t.entity_id) {postings}")
        total: int = conn.execute(count_sql, params).fetchone()[0]
        return top, total

    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[EntityRecord]:
        conn = self._db.connection()
        found: dict[str, EntityRecord] = {}
        for part in _chunks(list(dict.fromkeys(ids))):
            for row in conn.execute(f"SELECT doc FROM graph_entities WHERE workspace_id = ? AND id IN "
                                    f"({_marks(len(part))})", (workspace_id, *part)):
                record = _entity_from_doc(json.loads(row[0]))
                found[record.id] = record
        return [found[i] for i in ids if i in found]

    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[ProofRecord]:
        conn = self._db.connection()
        found: dict[str, ProofRecord] = {}
        for part in _chunks(list(dict.fromkeys(ids))):
            for row in conn.execute(f"SELECT doc FROM graph_proofs WHERE workspace_id = ? AND id IN "
                                    f"({_marks(len(part))})", (workspace_id, *part)):
                d = json.loads(row[0])
                found[d["id"]] = ProofRecord(id=d["id"], provider=d["provider"], artifact=d["artifact"],
                                             content_hash=d["contentHash"], observed_at=d["observedAt"],
                                             freshness=d["freshness"], pointer=d.get("pointer"),
                                             line=d.get("line"), column=d.get("column"))
        return [found[i] for i in ids if i in found]

    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[RelationRecord]]:
        conn = self._db.connection()
        sql = (f"SELECT * FROM (SELECT {_REL_COLUMNS}, rank FROM graph_relations WHERE workspace_id = :ws"
               " AND from_id = :e AND proven = 1 ORDER BY rank, id LIMIT :cap)"
               f" UNION ALL SELECT * FROM (SELECT {_REL_COLUMNS}, rank FROM graph_relations WHERE workspace_id = :ws"
               " AND to_id = :e AND proven = 1 AND from_id <> :e ORDER BY rank, id LIMIT :cap)"
               " ORDER BY rank, id LIMIT :cap")
        return {eid: [_relation_from_row(r) for r in conn.execute(
            sql, {"ws": workspace_id, "e": eid, "cap": per_entity_cap})] for eid in dict.fromkeys(entity_ids)}

    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> NeighbourhoodTotals:
        ids = list(dict.fromkeys(entity_ids))
        if not ids:
            return NeighbourhoodTotals(0, 0)
        # Covering index scans only (the other endpoint is in the index), no temp tables for the relation count.
        conn, ids_json = self._db.connection(), json.dumps(ids)
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
        conn = self._db.connection()
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
        conn = self._db.connection()
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
        """sha256 of canonical_json({"entities": [...], "proofs": [...], "relations": [...]}), items by id."""
        digest = hashlib.sha256()
        for n, table in enumerate(("graph_entities", "graph_proofs", "graph_relations")):
            name = table.removeprefix("graph_")
            digest.update((("{" if n == 0 else "],") + f'"{name}":[').encode())
            first = True
            for (canon,) in conn.execute(f"SELECT canon FROM {table} WHERE workspace_id = ? ORDER BY id", (ws,)):
                if not first:
                    digest.update(b",")
                digest.update(canon.encode())
                first = False
        digest.update(b"]}")
        return digest.hexdigest()


def _record_fields(entity: EntityRecord) -> dict[str, Any]:
    return {name: getattr(entity, name) for name in EntityRecord.__slots__}
