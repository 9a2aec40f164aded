"""The graph leg of recall: a bounded BFS over the entity graph, then the eligible memories linked to it."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from agentkb.models.recall.api import RecallScope
from agentkb.ports.graph import GraphStore
from agentkb.ports.memory import MemoryStore

MAX_HOPS = 2
MIN_EDGE_WEIGHT = 0.3  # lighter edges are noise: never walked
HUB_NEIGHBOUR_CAP = 25  # neighbours taken per entity and step, heaviest first (a hub cannot flood the frontier)
MAX_REACHED_ENTITIES = 64
MEMORIES_PER_ENTITY = 20  # newest eligible memories linked to one entity


@dataclass(frozen=True, slots=True)
class GraphHit:
    memory_id: int
    depth: int  # entity hops from the nearest seed entity (0: linked to a seed entity itself)
    strength: float  # seed strength times the edge weights along the best path
    similarity: float
    relevance: float


def expand(graph: GraphStore, workspace_id: str, seeds: Mapping[str, float], max_hops: int = MAX_HOPS,
           min_weight: float = MIN_EDGE_WEIGHT, hub_cap: int = HUB_NEIGHBOUR_CAP,
           max_entities: int = MAX_REACHED_ENTITIES) -> dict[str, tuple[int, float]]:
    """Entity id -> (hops, path strength) for seeds and everything within `max_hops` edges of weight >= min."""
    reached = {eid: (0, strength) for eid, strength in seeds.items()}
    frontier = set(seeds)
    for depth in range(1, max_hops + 1):
        if not frontier or len(reached) >= max_entities:
            break
        found: dict[str, float] = {}
        for a, b, _kind, weight in graph.neighbours(workspace_id, sorted(frontier), min_weight, hub_cap):
            for src, dst in ((a, b), (b, a)):
                if src in frontier and dst not in reached:
                    found[dst] = max(found.get(dst, 0.0), reached[src][1] * weight)
        best = sorted(found.items(), key=lambda item: (-item[1], item[0]))[:max_entities - len(reached)]
        reached.update({eid: (depth, strength) for eid, strength in best})
        frontier = {eid for eid, _ in best}
    return reached


def relevance(strength: float, similarity: float) -> float:
    """Graph relevance: the path strength, scaled by how close the memory itself is to the query."""
    return strength * (0.5 + 0.5 * min(1.0, max(0.0, similarity)))


def links_by_entity(store: MemoryStore, scope: RecallScope, entity_ids: Sequence[str],
                    per_entity_cap: int) -> dict[str, list[int]]:
    """Every entity's eligible linked memories, newest first (at most `per_entity_cap`; [] for none)."""
    out: dict[str, list[int]] = {eid: [] for eid in entity_ids}
    for memory_id, entity_id in store.linked_memories(scope, entity_ids, per_entity_cap) if entity_ids else []:
        out[entity_id].append(memory_id)
    return out


def _reached_links(store: MemoryStore, scope: RecallScope, reached: Collection[str],
                   known: Mapping[str, Sequence[int]]) -> list[tuple[int, str]]:
    """The linked memories of the reached entities; those in `known` (read at least MEMORIES_PER_ENTITY deep by
    the same request, newest first) are not read again: one store read per entity and request."""
    pairs = [(memory_id, eid) for eid in sorted(reached) if eid in known
             for memory_id in known[eid][:MEMORIES_PER_ENTITY]]
    unknown = [eid for eid in sorted(reached) if eid not in known]
    return pairs + (store.linked_memories(scope, unknown, MEMORIES_PER_ENTITY) if unknown else [])


def graph_matches(store: MemoryStore, graph: GraphStore, scope: RecallScope, seeds: Mapping[str, float],
                  vector: list[float], exclude: Collection[int], limit: int,
                  max_hops: int = MAX_HOPS, known: Mapping[str, Sequence[int]] | None = None) -> list[GraphHit]:
    """Eligible memories reached through the graph (never one of `exclude`), most relevant first. `known`: links
    this request has read already (`links_by_entity` with a cap of at least MEMORIES_PER_ENTITY)."""
    if not seeds or limit <= 0:
        return []
    reached = expand(graph, scope.workspace_id, seeds, max_hops=max_hops)
    best: dict[int, tuple[float, int]] = {}
    for memory_id, entity_id in _reached_links(store, scope, reached, known or {}):
        if memory_id in exclude:
            continue
        depth, strength = reached[entity_id]
        current = best.get(memory_id)
        if current is None or (strength, -depth) > (current[0], -current[1]):
            best[memory_id] = (strength, depth)
    sims = store.similarities(scope.workspace_id, list(best), vector)
    hits = [GraphHit(mid, depth, strength, sims.get(mid, 0.0), relevance(strength, sims.get(mid, 0.0)))
            for mid, (strength, depth) in best.items()]
    hits.sort(key=lambda h: (-h.relevance, h.depth, h.memory_id))
    return hits[:limit]
