"""Graph search: ranking tiers, rarity, ties, determinism, scope before ranking, hub bounds."""

from __future__ import annotations

import json
from typing import Any

from agentkb.models.graph.api import GraphSearchRequest
from agentkb.services.graph.search import RELATIONS_PER_ENTITY, search_graph
from conftest import batch, entity, proof, relation, search, write


def ids(result: dict[str, Any]) -> list[str]:
    return [e["id"] for e in result["entities"]]


def test_exact_then_prefix_then_terms(store: Any) -> None:
    write(store, batch([
        entity("t1", "the billing service", kind="document"),  # term match only
        entity("p1", "billing-api", kind="service"),  # prefix of the label
        entity("x1", "Billing", kind="module"),  # exact label, case-insensitive
        entity("k1", "payments", kind="package", key="billing"),  # exact identity key
        entity("a1", "ledger", kind="service", aliases=["BILLING"]),  # exact alias
    ]))
    assert ids(search(store, query="billing")) == ["x1", "k1", "a1", "p1", "t1"]


def test_rare_terms_outrank_common_ones_and_coverage_counts(store: Any) -> None:
    common = [entity(f"c{i}", f"service number {i}") for i in range(8)]
    write(store, batch([*common, entity("r1", "service for refunds"), entity("r2", "refunds worker")]))
    result = search(store, query="refunds service")
    assert ids(result)[:2] == ["r1", "r2"]  # both terms > the rare term alone > the common term alone
    assert result["totalMatches"] == 10


def test_ties_break_by_kind_then_label_then_id(store: Any) -> None:
    write(store, batch([entity("b", "queue zeta", kind="queue"), entity("a", "queue alpha", kind="queue"),
                        entity("c", "queue alpha", kind="api", key="c2"), entity("d", "queue alpha", kind="queue",
                                                                                   key="d2")]))
    assert ids(search(store, query="queue")) == ["c", "a", "d", "b"]


def test_same_request_same_bytes(demo_store: Any) -> None:
    request = GraphSearchRequest(workspaceId="demo", query="invoice events", projection="agent")
    first = json.dumps(search_graph(demo_store, request), separators=(",", ":"))
    assert all(json.dumps(search_graph(demo_store, request), separators=(",", ":")) == first for _ in range(3))


def test_kind_filter_is_applied_before_ranking(demo_store: Any) -> None:
    result = search(demo_store, query="invoice", kind="endpoint", limit=1)
    assert [e["kind"] for e in result["entities"]] == ["endpoint"]
    assert result["totalMatches"] == 2 and result["truncated"] is True
    assert result["kind"] == "endpoint"


def test_project_scope_keeps_project_and_proven_workspace_neighbours(demo_store: Any) -> None:
    billing = search(demo_store, query="payments", projectId="billing")
    assert "owner:payments-team" in ids(billing)  # workspace-scope, proven link to billing-api
    ledger = search(demo_store, query="billing", projectId="ledger")
    assert ids(ledger) == []  # billing's entities are out of ledger's scope
    events = search(demo_store, query="invoice-events", projectId="ledger")
    assert ids(events) == ["queue:invoice-events"]  # proven consumer relation from the ledger project


def test_project_scope_ignores_unproven_links(store: Any) -> None:
    from agentkb.models.graph.records import GraphBatch, RelationRecord

    write(store, batch([entity("p", "inside", project="alpha"), entity("w", "shared thing")]))
    store.upsert("demo", GraphBatch(relations=(RelationRecord("m", "p", "w", "mentions", weight=1.0),)))
    assert ids(search(store, query="shared", projectId="alpha")) == []
    write(store, batch([], [relation("r", "p", "w", ["pr"])], [proof("pr")]))
    assert ids(search(store, query="shared", projectId="alpha")) == ["w"]


def test_neighbourhood_related_entities_and_proofs(demo_store: Any) -> None:
    result = search(demo_store, query="billing-api", limit=1)
    assert ids(result) == ["svc:billing-api"]
    assert {r["id"] for r in result["relations"]} == {
        "rel:billing-exposes-api", "rel:billing-writes-to-db", "rel:billing-publishes-events",
        "rel:payments-owns-billing"}
    assert result["relations"][0]["trust"] == "authoritative"
    assert {e["id"] for e in result["relatedEntities"]} == {
        "api:billing-v1", "db:billing-postgres", "queue:invoice-events", "owner:payments-team"}
    cited = {p for item in (*result["entities"], *result["relations"]) for p in item["proofIds"]}
    assert {p["id"] for p in result["proofs"]} == cited
    assert all("observedAt" in p for p in result["proofs"])


def hub_graph(store: Any, spokes: int) -> None:
    entities = [entity("hub", "central hub", proofs=["p0"])]
    entities += [entity(f"s{i:04d}", f"spoke {i}", kind="module") for i in range(spokes)]
    trusts = ["ambiguous", "observed", "corroborated", "authoritative"]
    relations = [relation(f"r{i:04d}", "hub", f"s{i:04d}", [f"p{i % 40}"], trust=trusts[i % 4]) for i in range(spokes)]
    write(store, batch(entities, relations, [proof(f"p{i}") for i in range(40)]))


def test_hub_neighbourhood_is_capped_in_the_query_and_reported(store: Any) -> None:
    hub_graph(store, 600)
    result = search(store, query="central hub", limit=1)
    assert len(result["relations"]) == RELATIONS_PER_ENTITY
    assert all(r["trust"] == "authoritative" for r in result["relations"])  # best trust first, then id
    assert [r["id"] for r in result["relations"]] == sorted(r["id"] for r in result["relations"])
    assert result["truncated"] is True
    assert len(json.dumps(result)) < 20_000


def test_source_hash_is_cached_per_version(demo_store: Any) -> None:
    conn = demo_store._db.connection()
    first = search(demo_store, query="billing")["graphSourceHash"]
    conn.execute("UPDATE graph_meta SET hash = ? WHERE workspace_id = 'demo'", ("f" * 64,))
    assert search(demo_store, query="billing")["graphSourceHash"] == "f" * 64  # served from the cache
    conn.execute("UPDATE graph_meta SET version = version + 1 WHERE workspace_id = 'demo'")
    assert search(demo_store, query="billing")["graphSourceHash"] == first  # recomputed for the new version


def test_empty_workspace_and_no_match(store: Any) -> None:
    result = search(store, query="anything")
    assert result["entities"] == [] and result["totalMatches"] == 0 and result["truncated"] is False
