"""Entity matching of the embedded graph: exact and prefix name tiers, then rare-term postings, ranked in SQL."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.graph.schema import marks
from agentkb.models.graph.records import GraphMatchPage, GraphMatchQuery
from agentkb.services.graph.rank import NamedMatches, keep_best_tier, merge_matches, named_scores, term_fetch_limit


@dataclass(frozen=True, slots=True)
class SqliteGraphMatcher:
    """GraphStore.term_statistics and match_entities."""

    db: Database

    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        conn = self.db.connection()
        row = conn.execute("SELECT entity_count FROM graph_meta WHERE workspace_id = ?", (workspace_id,)).fetchone()
        df = {r[0]: r[1] for r in conn.execute(
            f"SELECT term, df FROM graph_term_df WHERE workspace_id = ? AND term IN ({marks(len(terms))})",
            (workspace_id, *terms))} if terms else {}
        return (row[0] if row else 0), df

    def match_entities(self, query: GraphMatchQuery) -> GraphMatchPage:
        # Postings carry kind, label and project (denormalised) so ranking and scoping never join graph_entities
        # for every posting of a common term; the exact/prefix tiers are small index range reads merged here.
        conn = self.db.connection()
        params: dict[str, Any] = {"ws": query.workspace_id, "t": query.text, "hi": query.text + "\U0010ffff",
                                  "bonus": query.coverage_bonus, "kind": query.kind, "project": query.project_id}
        named = self._named_matches(conn, query, params)
        scores = self._term_scores(conn, query, params, list(named)) if named else {}
        top, term_total = self._term_matches(conn, query, params, term_fetch_limit(len(named), query.limit))
        return merge_matches(named, scores, top, term_total, query.limit)

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
                       params: dict[str, Any]) -> NamedMatches:
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
        out: NamedMatches = {}
        for tier, eid, kind, label in conn.execute(" UNION ALL ".join(legs), params):
            keep_best_tier(out, eid, tier, kind, label)
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
        sql = (f"SELECT t.entity_id, t.term, q.column2 * t.weight FROM (VALUES {values}) q JOIN graph_terms t"
               " ON t.workspace_id = :ws AND t.term = q.column1 AND t.entity_id IN (SELECT value FROM json_each(:ids))")
        return named_scores(conn.execute(sql, {**params, "ids": json.dumps(ids)}),
                            {t for t, _ in query.matching_terms}, query.coverage_bonus)

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
