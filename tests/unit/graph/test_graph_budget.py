"""Agent projection: every hard limit, fair proof sharing, and exact omitted counts."""

from __future__ import annotations

from typing import Any

from agentkb.services.graph.budget import AGENT_LIMITS, cap_attributes, interleave, share_round_robin
from conftest import batch, entity, proof, relation, search, write


def test_interleave_round_robin_dedupes() -> None:
    assert interleave([[1, 2, 3], [2, 4], [5]], key=lambda x: x) == [1, 2, 5, 4, 3]


def test_share_round_robin_gives_every_item_its_first_proof_first() -> None:
    refs = [["a1", "a2", "a3", "a4"], ["b1", "b2"], ["c1"], ["a1", "d2"]]
    assert share_round_robin(refs, 4) == ["a1", "b1", "c1", "a2"]
    assert share_round_robin(refs, 100) == ["a1", "b1", "c1", "a2", "b2", "d2", "a3", "a4"]


def test_cap_attributes_counts_every_cut() -> None:
    capped, omitted = cap_attributes({"tags": list(range(11)), "text": "x" * 300, "n": 3,
                                      "names": ["y" * 257, "ok"]}, AGENT_LIMITS)
    assert capped["tags"] == list(range(8)) and len(capped["text"]) == 256 and len(capped["names"][0]) == 256
    assert omitted == 3 + 1 + 1


def rich_graph(store: Any) -> None:
    """One hub with 30 proven relations (each citing 5 proofs), 10 aliases and oversized attributes."""
    proofs = [proof(f"p{i:03d}") for i in range(200)]
    hub = entity("hub", "atlas core", aliases=[f"alias {i}" for i in range(10)],
                 proofs=[f"p{i:03d}" for i in range(6)],
                 attributes={"owners": [f"o{i}" for i in range(12)], "notes": "n" * 400, "tier": 1})
    spokes = [entity(f"s{i:02d}", f"spoke {i}", kind="module") for i in range(30)]
    relations = [relation(f"r{i:02d}", "hub", f"s{i:02d}", [f"p{(10 + i * 5 + j):03d}" for j in range(5)])
                 for i in range(30)]
    extra = [entity(f"x{i:02d}", f"atlas extra {i}", kind="document") for i in range(3)]
    write(store, batch([hub, *spokes, *extra], relations, proofs))


def test_agent_projection_applies_every_limit_and_counts_every_omission(store: Any) -> None:
    rich_graph(store)
    full = search(store, query="atlas core", limit=1)
    agent = search(store, query="atlas core", limit=1, projection="agent")
    budget = agent["budget"]
    assert budget["mode"] == "agent" and budget["limits"] == AGENT_LIMITS.as_dict()
    omitted = budget["omitted"]
    # entities: 4 matched ("atlas" in 3 extras), 1 returned
    assert agent["totalMatches"] == 4 and omitted["entities"] == 3
    # relations: 30 exist; the query caps at 16 per entity, the agent budget at 24 -> 16 returned, 14 omitted
    assert len(full["relations"]) == 16 and len(agent["relations"]) == 16 and omitted["relations"] == 14
    assert omitted["relatedEntities"] == 30 - len(agent["relatedEntities"])
    hub = agent["entities"][0]
    assert len(hub["identity"]["aliases"]) == 8 and omitted["aliases"] == 2
    assert len(hub["attributes"]["owners"]) == 8 and len(hub["attributes"]["notes"]) == 256
    assert omitted["attributeValues"] == 4 + 1
    # proof references: hub 6 -> 4, each relation 5 -> 4
    assert len(hub["proofIds"]) == 4 and all(len(r["proofIds"]) == 4 for r in agent["relations"])
    assert omitted["proofReferences"] == 2 + 16 * 1
    # proofs: 16 objects, shared round-robin: the first proof of 16 different items
    assert len(agent["proofs"]) == 16
    items = [hub, *agent["relations"]]
    assert [p["id"] for p in agent["proofs"]] == [item["proofIds"][0] for item in items][:16]
    cited = {p for item in (full["entities"][0], *full["relations"]) for p in item["proofIds"]}
    assert omitted["proofs"] == len(cited) - 16
    assert agent["truncated"] is True and "budget" not in full


def test_relations_beyond_24_are_cut_and_counted(store: Any) -> None:
    entities = [entity(f"e{i}", f"node shared {i}", kind="module", proofs=["p"]) for i in range(4)]
    entities += [entity(f"n{i:02d}", f"leaf {i}", kind="file") for i in range(40)]
    relations = [relation(f"r{i:02d}", f"e{i % 4}", f"n{i:02d}", ["p"]) for i in range(40)]
    write(store, batch(entities, relations, [proof("p")]))
    agent = search(store, query="shared", projection="agent")
    assert len(agent["relations"]) == 24 and agent["budget"]["omitted"]["relations"] == 16
    assert {r["from"] for r in agent["relations"][:4]} == {"e0", "e1", "e2", "e3"}  # shared across entities
    assert len(agent["relatedEntities"]) == 24 and agent["budget"]["omitted"]["relatedEntities"] == 16
    assert agent["budget"]["omitted"]["proofs"] == 0 and agent["proofs"] == [agent["proofs"][0]]


def test_nothing_omitted_means_not_truncated(demo_store: Any) -> None:
    agent = search(demo_store, query="ADR-7: publish billing events on SQS", limit=1, projection="agent")
    assert agent["budget"]["omitted"]["relations"] == 0
    assert agent["truncated"] is any(agent["budget"]["omitted"].values())
