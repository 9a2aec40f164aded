"""The graph leg's bounded BFS over the entity graph: hub cap, heaviest edges first, hop limit."""

from __future__ import annotations

from agentkb.composition import Ports
from agentkb.models.graph.records import GraphBatch, RelationRecord
from agentkb.services.memory.graph_links import recall_entity_id
from agentkb.services.recall.graph_leg import expand


def test_bfs_caps_neighbours_per_hub(bundle: Ports) -> None:
    graph = bundle.graph
    hub = recall_entity_id("topic", "hub")  # recall's own entity space: ids joined by weighted memory edges
    spokes = [recall_entity_id("person", f"p{i}") for i in range(60)]
    graph.upsert("ws1", GraphBatch(relations=tuple(
        RelationRecord(id=f"r{i}", from_id=hub, to_id=s, kind="mentions", weight=0.5 + i / 200)
        for i, s in enumerate(spokes))))
    reached = expand(graph, "ws1", {hub: 1.0}, hub_cap=10)
    assert len(reached) == 11
    heaviest = set(spokes[-10:])
    assert {e for e, (d, _) in reached.items() if d == 1} == heaviest
    assert expand(graph, "ws1", {hub: 1.0}, max_hops=0) == {hub: (0, 1.0)}
