"""The GraphStore contract: the same writes and reads on the embedded engine and on DynamoDB (moto), held equal.

Writes (counts, source hash), matches (tiers, rarity, coverage, ties, scopes), records by id, proofs, capped
neighbourhoods and totals, weighted neighbours and identity claims: each assertion runs on both engines.
"""

from __future__ import annotations

import copy
import hashlib

import pytest
from graph_engines import Both

from agentkb.errors import Conflict
from agentkb.models.graph.records import EntityRecord, GraphBatch, GraphMatchQuery, RelationRecord
from agentkb.models.graph.text import canonical_json, identity_fingerprint
from agentkb.services.graph.changes import CONFIDENCE_WEIGHT
from agentkb.services.graph.write import parse_graph_write, upsert_graph
from tests.graph_payloads import DEMO, WS, batch, entity, proof, relation


def test_demo_import_search_and_idempotent_reupsert(both: Both) -> None:
    first = both.write(copy.deepcopy(DEMO))
    assert both.call("source_hash", WS) == first["graphSourceHash"]
    again = both.write(copy.deepcopy(DEMO))  # identical content: same hash, version kept
    assert again == first
    for body in ({"query": "billing"}, {"query": "invoice events", "projection": "agent"},
                 {"query": "invoice", "kind": "endpoint", "limit": 1}, {"query": "payments", "projectId": "billing"},
                 {"query": "billing", "projectId": "ledger"}, {"query": "invoice-events", "projectId": "ledger"},
                 {"query": "billing-api", "limit": 1}, {"query": "nothing here"}):
        both.search(**body)
    ids = [e["id"] for e in DEMO["entities"]]
    both.call("entities", WS, [*reversed(ids), "missing"])
    both.call("existing_entity_ids", WS, [*ids, "missing"])
    both.call("proofs", WS, [p["id"] for p in DEMO["proofs"]] + ["missing"])
    both.call("existing_proof_ids", WS, [p["id"] for p in DEMO["proofs"]] + ["missing"])
    both.call("neighbourhood_totals", WS, ids[:3])
    both.call("proven_relations", WS, ids, 2)
    both.call("term_statistics", WS, ["billing", "invoice", "absent"])
    # only the timestamp of a proof moved: stored, but the hash and version stay
    moved = copy.deepcopy(DEMO)
    moved["proofs"][0]["observedAt"] = "2030-01-01T00:00:00Z"
    assert both.write(moved)["graphSourceHash"] == first["graphSourceHash"]
    assert both.call("proofs", WS, [moved["proofs"][0]["id"]])[0].observed_at == "2030-01-01T00:00:00Z"


def test_match_tiers_rarity_coverage_and_ties(both: Both) -> None:
    both.write(batch([
        entity("t1", "the billing service", kind="document"),
        entity("p1", "billing-api", kind="service"),
        entity("x1", "Billing", kind="module"),
        entity("k1", "payments", kind="package", key="billing"),
        entity("a1", "ledger", kind="service", aliases=["BILLING"]),
        *[entity(f"c{i}", f"service number {i}", attributes={"note": "refunds archive"} if i == 3 else {})
          for i in range(8)],
        entity("r1", "service for refunds"), entity("r2", "refunds worker"),
        entity("b", "queue zeta", kind="queue"), entity("a", "queue alpha", kind="queue"),
        entity("c", "queue alpha", kind="api", key="c2"), entity("d", "queue alpha", kind="queue", key="d2"),
    ]))
    assert [e["id"] for e in both.search(query="billing")["entities"]] == ["x1", "k1", "a1", "p1", "t1"]
    assert [e["id"] for e in both.search(query="refunds service")["entities"]][:3] == ["r1", "c3", "r2"]
    assert [e["id"] for e in both.search(query="queue")["entities"]] == ["c", "a", "d", "b"]
    for body in ({"query": "bill"}, {"query": "service", "limit": 3}, {"query": "refunds", "kind": "service"},
                 {"query": "queue alpha"}, {"query": "number 3 refunds", "limit": 2}):
        both.search(**body)
    # the store-level query with boost terms (too common to match alone) and a named match
    query = GraphMatchQuery(WS, "service", (("refunds", 5),), (("service", 1), ("number", 1)), 2, 4)
    both.call("match_entities", query)
    both.call("match_entities", GraphMatchQuery(WS, "billing", (("billing", 3),), (("service", 1),), 2, 10))
    both.call("match_entities", GraphMatchQuery(WS, "billing", (), (), 2, 10, kind="service"))


def test_renames_and_project_moves_update_postings_names_and_links(both: Both) -> None:
    both.write(batch([entity("p", "inside", project="alpha"), entity("w", "shared thing"),
                      entity("q", "other", project="beta")]))
    both.upsert(GraphBatch(relations=(RelationRecord("m", "p", "w", "mentions", weight=1.0),)))
    assert both.search(query="shared", projectId="alpha")["entities"] == []  # unproven: no link
    both.write(batch([], [relation("r", "p", "w", ["pr"])], [proof("pr")]))
    assert [e["id"] for e in both.search(query="shared", projectId="alpha")["entities"]] == ["w"]
    # p moves to project beta: its relations' links follow
    both.write(batch([entity("p", "inside", project="beta")]))
    assert both.search(query="shared", projectId="alpha")["entities"] == []
    assert [e["id"] for e in both.search(query="shared", projectId="beta")["entities"]] == ["w"]
    # a rename drops the old name and terms
    both.write(batch([entity("w", "renamed common", aliases=["Alias One"])]))
    assert both.search(query="shared")["entities"] == []
    for body in ({"query": "renamed"}, {"query": "alias one"}, {"query": "alias"},
                 {"query": "common", "projectId": "beta"}):
        both.search(**body)
    both.call("term_statistics", WS, ["shared", "thing", "renamed", "alias"])
    both.call("identity_owners", WS, [("service", "", "w"), ("service", "beta", "p"), ("service", "alpha", "p")])


def test_hub_caps_are_applied_in_the_query_and_big_batches_are_chunked(both: Both) -> None:
    spokes = 40  # > 16 per entity, and > 100 transaction actions: several transactions
    trusts = ["ambiguous", "observed", "corroborated", "authoritative"]
    entities = [entity("hub", "central hub", proofs=["p0"])]
    entities += [entity(f"s{i:04d}", f"spoke {i}", kind="module") for i in range(spokes)]
    relations = [relation(f"r{i:04d}", "hub" if i % 5 else f"s{i:04d}", f"s{i:04d}" if i % 5 else "hub",
                          [f"p{i % 10}"], trust=trusts[i % 4], confidence=["high", "low"][i % 2])
                 for i in range(spokes)]
    both.write(batch(entities, relations, [proof(f"p{i}") for i in range(10)]))
    result = both.search(query="central hub", limit=1)
    assert len(result["relations"]) == 16 and result["truncated"] is True
    both.search(query="spoke", limit=20, projection="agent")
    both.call("proven_relations", WS, ["hub", "s0001", "s0005", "nobody"], 16)
    both.call("neighbourhood_totals", WS, ["hub", "s0001", "s0005"])
    both.call("neighbours", WS, ["hub"], 0.5, 10)
    both.call("neighbours", WS, ["hub", "s0000"], 0.3, 500)


def test_neighbours_min_weight_caps_self_loops_and_identity_upserts(both: Both) -> None:
    def person(eid: str, key: str = "ada@example.com", kind: str = "owner") -> EntityRecord:
        return EntityRecord(id=eid, kind=kind, label="Ada", project_id=None, identity_key=key,
                            identity_scope="workspace", aliases=(), fingerprint=identity_fingerprint(kind, None, key))

    assert both.identity_upsert(person("m1")) == "m1"
    assert both.identity_upsert(person("m2")) == "m1"
    both.identity_upsert(person("t1", "billing", "document"))
    both.identity_upsert(person("t2", "ledger", "document"))
    both.upsert(GraphBatch(relations=(
        RelationRecord("w1", "m1", "t1", "mentions", weight=0.9),
        RelationRecord("w2", "m1", "t1", "related-to", weight=0.2),
        RelationRecord("w3", "t2", "m1", "mentions", weight=0.5),
        RelationRecord("w4", "m1", "m1", "related-to", weight=0.7),
        RelationRecord("w5", "t2", "t1", "mentions", confidence="low"),
        RelationRecord("w6", "m1", "t2", "mentions", weight=0.5))))
    assert both.call("neighbours", WS, ["m1"], 0.5, 8)[0] == ("m1", "t1", "mentions", 0.9)
    for ids, weight, cap in ((["m1"], 0.5, 2), (["m1", "t1", "t2"], 0.0, 3), (["t1"], 0.3, 8), (["m1"], 0.95, 8)):
        both.call("neighbours", WS, ids, weight, cap)
    # weights change: the adjacency follows
    both.upsert(GraphBatch(relations=(RelationRecord("w2", "m1", "t1", "related-to", weight=0.95),)))
    both.call("neighbours", WS, ["m1"], 0.5, 8)
    assert both.search(query="Ada")["relations"] == []  # proof-less relations never surface in graph search
    both.call("source_hash", WS)
    both.call("source_hash", "empty-workspace")
    both.call("term_statistics", "empty-workspace", ["ada"])


def test_identity_clash_with_the_store_is_a_conflict(both: Both) -> None:
    both.write(batch([entity("n1", "a", key="same")]))
    with pytest.raises(Conflict):
        upsert_graph(both.sqlite, parse_graph_write(batch([entity("n9", "b", key="same")])))
    with pytest.raises(Conflict):
        upsert_graph(both.ddb, parse_graph_write(batch([entity("n9", "b", key="same")])))
    # a racing writer that skipped the service's check is stopped by the conditional identity claim
    clash = EntityRecord("n8", "service", "c", None, "same", "workspace", (),
                         identity_fingerprint("service", None, "same"))
    with pytest.raises(Conflict):
        both.ddb.upsert(WS, GraphBatch(entities=(clash,)))
    assert both.ddb.existing_entity_ids(WS, ["n8"]) == set()
    both.call("source_hash", WS)




def test_source_hash_is_the_canonical_form_of_the_stored_graph(both: Both) -> None:
    # Given the demo graph on both engines
    data = both.write(copy.deepcopy(DEMO))
    # Then its source hash is sha256 of the canonical, timestamp-free graph, items by id (computed here by hand)
    entities = sorted(both.call("entities", WS, [e["id"] for e in DEMO["entities"]]), key=lambda e: e.id)
    proofs = sorted(both.call("proofs", WS, [p["id"] for p in DEMO["proofs"]]), key=lambda p: p.id)
    relations = sorted(({**r, "weight": CONFIDENCE_WEIGHT[r["confidence"]]} for r in DEMO["relations"]),
                       key=lambda r: r["id"])
    canonical = canonical_json({"entities": [e.doc() for e in entities],
                                "proofs": [p.doc(with_timestamp=False) for p in proofs], "relations": relations})
    assert data["graphSourceHash"] == hashlib.sha256(canonical.encode()).hexdigest()
