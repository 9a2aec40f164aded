"""The graph leg: BFS from the entities of direct hits and of the request, bounded by hops, weight and hub cap."""

from __future__ import annotations

from typing import Any

from tests.handlers.recall.recall_helpers import names, recall, write


def _fillers(key: str, n: int = 4) -> None:
    for i in range(n):
        write(key, f"filler-{i}", f"deploy billing service steps {i}")


def chain(key: str, weights: list[float]) -> None:
    """Memories m0..mN, each naming topic tN; a relation memory links t0-t1-...-tN with the given weights."""
    for i in range(len(weights) + 1):
        write(key, f"m{i}", f"zebra{i} giraffe{i}", entities={"topics": [f"t{i}"]})
    topics = [f"t{i}" for i in range(len(weights) + 1)]
    relations = [{"from": f"t{i}", "to": f"t{i + 1}", "kind": "related-to", "weight": w}
                 for i, w in enumerate(weights)]
    write(key, "links", "okapi", entities={"topics": topics}, relations=relations)


def test_graph_matches_come_from_the_direct_hits_entities(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "deploy", "deploy billing service", entities={"repos": ["billing"]})
    write(rw_key, "owner", "quokka wombat", entities={"repos": ["billing"]})
    _fillers(rw_key)
    plain = recall(rw_key, query="deploy billing service", limits={"max_items": 4})
    assert plain["graph_matches"] == []  # no request entity asks for a neighbourhood: direct hits only
    out = recall(rw_key, query="deploy billing service", limits={"max_items": 4}, entities={"topics": ["ops"]})
    graph = {i["name"]: i for i in out["graph_matches"]}
    assert "owner" in graph and graph["owner"]["graph_depth"] == 0 and graph["owner"]["source"] == "graph"
    direct_ids = {i["memory_id"] for i in out["direct_matches"]}
    assert not direct_ids & {i["memory_id"] for i in out["graph_matches"]}  # never duplicated


def test_hops_weights_and_depth(rw_key: str, fake_embedder: Any) -> None:
    chain(rw_key, [0.9, 0.8, 0.7])  # t0 - t1 - t2 - t3
    _fillers(rw_key, 14)  # the direct leg fills with these; k < corpus so the graph leg has work
    out = recall(rw_key, query="deploy billing service", entities={"topics": ["t0"]}, limits={"max_items": 10})
    depth = {i["name"]: i["graph_depth"] for i in out["graph_matches"]}
    assert depth.get("m0") == 0 and depth.get("m1") == 1 and depth.get("m2") == 2
    assert "m3" not in depth  # three hops away: beyond the default two


def test_light_edges_are_not_walked(rw_key: str, fake_embedder: Any) -> None:
    chain(rw_key, [0.2])
    _fillers(rw_key, 14)  # the direct leg fills with these; k < corpus so the graph leg has work
    out = recall(rw_key, query="deploy billing service", entities={"topics": ["t0"]}, limits={"max_items": 10})
    assert "m0" in names(out, "graph_matches") and "m1" not in names(out, "graph_matches")


def test_graph_matches_are_ordered_by_relevance(rw_key: str, fake_embedder: Any) -> None:
    chain(rw_key, [0.9, 0.9])
    _fillers(rw_key, 14)  # the direct leg fills with these; k < corpus so the graph leg has work
    out = recall(rw_key, query="deploy billing service", entities={"topics": ["t0"]}, limits={"max_items": 10})
    graph = out["graph_matches"]
    assert [i["name"] for i in graph if i["name"].startswith("m")] == ["m0", "m1", "m2"]  # closer first


def test_the_request_entities_seed_the_graph_even_without_direct_hits(rw_key: str, fake_embedder: Any) -> None:
    write(rw_key, "acme-notes", "quokka wombat", entities={"customers": ["Acme"]})
    _fillers(rw_key, 3)
    plain = recall(rw_key, query="deploy billing service", limits={"max_items": 3})
    seeded = recall(rw_key, query="deploy billing service", limits={"max_items": 3}, entities={"customers": ["acme"]})
    assert "acme-notes" not in names(plain) and "acme-notes" in names(seeded)
