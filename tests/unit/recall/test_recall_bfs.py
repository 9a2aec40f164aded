"""The graph leg's bounded BFS over the entity graph: hub cap, heaviest edges first, hop limit."""

from __future__ import annotations

from typing import Any

from agentkb.models.graph import GraphBatch, RelationRecord
from agentkb.services.memory_graph import new_entity
from agentkb.services.recall_graph import expand


def test_bfs_caps_neighbours_per_hub(container: Any) -> None:
    graph = container.graph
    hub = new_entity("topic", "hub")
    spokes = [new_entity("person", f"p{i}") for i in range(60)]
    graph.upsert("ws1", GraphBatch(entities=(hub, *spokes), relations=tuple(
        RelationRecord(id=f"r{i}", from_id=hub.id, to_id=s.id, kind="mentions", weight=0.5 + i / 200)
        for i, s in enumerate(spokes))))
    reached = expand(graph, "ws1", {hub.id: 1.0}, hub_cap=10)
    assert len(reached) == 11
    heaviest = {s.id for s in spokes[-10:]}
    assert {e for e, (d, _) in reached.items() if d == 1} == heaviest
    assert expand(graph, "ws1", {hub.id: 1.0}, max_hops=0) == {hub.id: (0, 1.0)}
