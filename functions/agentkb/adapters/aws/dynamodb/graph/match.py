"""Entity matching of the DynamoDB graph: name items for the exact and prefix tiers, then term postings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentkb.adapters.aws.dynamodb.graph.base import DynamoDbGraphTable
from agentkb.adapters.aws.dynamodb.tables import get_n, get_s, s
from agentkb.models.graph.records import GraphMatchPage, GraphMatchQuery
from agentkb.services.graph.rank import (
    TIER_EXACT,
    TIER_PREFIX,
    NamedMatches,
    keep_best_tier,
    merge_matches,
    named_scores,
    term_fetch_limit,
)


@dataclass(frozen=True, slots=True)
class DynamoDbGraphMatcher:
    """GraphStore.term_statistics and match_entities."""

    db: DynamoDbGraphTable

    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        meta = self.db.get_many([(f"G#{workspace_id}", "#META")]).get((f"G#{workspace_id}", "#META"))
        by_pk = {f"GT#{workspace_id}#{t}": t for t in terms}
        found = self.db.get_many((pk, "#DF") for pk in by_pk)
        df = {by_pk[pk]: get_n(item, "df") for (pk, _sk), item in found.items()}
        return (get_n(meta, "entity_count") if meta else 0), df

    def _linked(self, query: GraphMatchQuery) -> set[str]:
        if query.project_id is None:
            return set()
        return {get_s(i, "entity_id") or "" for i in self.db.partition(f"GL#{query.workspace_id}#{query.project_id}")}

    @staticmethod
    def _in_scope(query: GraphMatchQuery, item: dict[str, Any], linked: set[str]) -> bool:
        if query.kind is not None and get_s(item, "kind") != query.kind:
            return False
        if query.project_id is not None:
            project = get_s(item, "project_id") or ""
            return project == query.project_id or (project == "" and (get_s(item, "entity_id") or "") in linked)
        return True

    def match_entities(self, query: GraphMatchQuery) -> GraphMatchPage:
        ws = query.workspace_id
        linked = self._linked(query)
        # exact (3) and prefix (2) tiers: one range read of the name items
        if query.text:
            names = self.db.partition(f"GN#{ws}", "begins_with(sk, :t)", {":t": s(query.text)})
        else:
            names = self.db.partition(f"GN#{ws}")
        named: NamedMatches = {}
        for item in names:
            if self._in_scope(query, item, linked):
                keep_best_tier(named, get_s(item, "entity_id") or "",
                               TIER_EXACT if get_s(item, "name") == query.text else TIER_PREFIX,
                               get_s(item, "kind") or "", get_s(item, "label") or "")
        scores = self._term_scores(query, list(named)) if named else {}
        top, term_total = self._term_matches(query, linked, term_fetch_limit(len(named), query.limit))
        return merge_matches(named, scores, top, term_total, query.limit)

    def _postings(self, ws: str, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """(term, entity id) -> posting weight, for the pairs that have a posting."""
        by_key = {(f"GT#{ws}#{t}", f"E#{e}"): (t, e) for t, e in pairs}
        found = self.db.get_many(by_key)
        return {by_key[k]: get_n(item, "weight") for k, item in found.items()}

    def _term_scores(self, query: GraphMatchQuery, ids: list[str]) -> dict[str, tuple[int, int]]:
        terms = (*query.matching_terms, *query.boost_terms)
        if not terms:
            return {}
        postings = self._postings(query.workspace_id, [(t, e) for t, _ in terms for e in ids])
        return named_scores(((eid, term, qw * postings[(term, eid)]) for term, qw in terms for eid in ids
                             if (term, eid) in postings), {t for t, _ in query.matching_terms}, query.coverage_bonus)

    def _term_matches(self, query: GraphMatchQuery, linked: set[str],
                      limit: int) -> tuple[list[tuple[str, int, str, str]], int]:
        if not query.matching_terms:
            return [], 0
        ws = query.workspace_id
        scored: dict[str, list[Any]] = {}  # id -> [score, kind, label]
        for term, qw in query.matching_terms:
            for item in self.db.partition(f"GT#{ws}#{term}", "begins_with(sk, :e)", {":e": s("E#")}):
                if not self._in_scope(query, item, linked):
                    continue
                eid = item["sk"]["S"][2:]
                row = scored.setdefault(eid, [0, get_s(item, "kind") or "", get_s(item, "label") or ""])
                row[0] += qw * get_n(item, "weight") + query.coverage_bonus
        if not limit:
            return [], len(scored)
        if query.boost_terms:
            postings = self._postings(ws, [(t, e) for t, _ in query.boost_terms for e in scored])
            for (term, eid), weight in postings.items():
                qw = dict(query.boost_terms)[term]
                scored[eid][0] += qw * weight + query.coverage_bonus
        ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[1][1], kv[1][2], kv[0]))[:limit]
        return [(eid, row[0], row[1], row[2]) for eid, row in ranked], len(scored)
