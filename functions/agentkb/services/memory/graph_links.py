"""Memories and the knowledge graph: link a memory's named entities, write its weighted relations.

A name that equals a workspace entity's label, identity key or alias (any kind, case-insensitive) links to that
entity: a memory naming `billing-api` attaches to `svc:billing-api`. A name that matches nothing stays in
recall's own entity space: a deterministic id (`mem-<kind>:<digest>`) that memory links and weighted memory edges
use, that drives recall's graph leg, and that is never stored as a graph entity, so graph search and snapshots
never see it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from agentkb.models.graph.records import GraphBatch, GraphMatchQuery, RelationRecord
from agentkb.models.graph.text import normalise_text as normalise
from agentkb.models.memory.api import MemoryRelation
from agentkb.ports.graph import GraphStore

EXACT_TIER = 3
RECALL_SPACE_PREFIX = "mem-"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def recall_entity_id(kind: str, name: str) -> str:
    """The id of a memory-named entity in recall's own space (deterministic: the same name, the same id)."""
    return f"{RECALL_SPACE_PREFIX}{kind}:{_digest(kind, normalise(name))[:20]}"


def is_recall_entity(entity_id: str) -> bool:
    return entity_id.startswith(RECALL_SPACE_PREFIX)


def find_workspace_entity(graph: GraphStore, workspace_id: str, name: str) -> str | None:
    """The workspace entity whose label, identity key or an alias equals the name (best-ranked first), or None."""
    query = GraphMatchQuery(workspace_id=workspace_id, text=normalise(name), matching_terms=(), boost_terms=(),
                            coverage_bonus=0, limit=1)
    exact = [m for m in graph.match_entities(query).matches if m.tier >= EXACT_TIER]
    return exact[0].entity_id if exact else None


def link_entities(graph: GraphStore, workspace_id: str,
                  named: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(kind, name) -> the workspace entity it names, else its recall-space id."""
    return {(kind, name): find_workspace_entity(graph, workspace_id, name) or recall_entity_id(kind, name)
            for kind, name in named}


def seed_entities(graph: GraphStore, workspace_id: str, named: Sequence[tuple[str, str]]) -> list[str]:
    """Recall's graph seeds for named entities: the workspace entity each names and its recall-space id (memories
    written before the workspace entity existed are linked to the latter)."""
    seeds: list[str] = []
    for kind, name in named:
        found = find_workspace_entity(graph, workspace_id, name)
        seeds.extend([found, recall_entity_id(kind, name)] if found else [recall_entity_id(kind, name)])
    return list(dict.fromkeys(seeds))


def relation_record(from_id: str, to_id: str, relation: MemoryRelation) -> RelationRecord:
    """A memory's weighted edge: proof-less, so graph search never returns it; recall's BFS walks it."""
    return RelationRecord(id=f"mem-rel:{_digest(from_id, relation.kind, to_id)[:24]}", from_id=from_id, to_id=to_id,
                          kind=relation.kind, derivation="authored", trust="observed", confidence="medium",
                          weight=float(relation.weight))


def write_memory_graph(graph: GraphStore, workspace_id: str, named: Sequence[tuple[str, str]],
                       relations: Sequence[MemoryRelation]) -> list[str]:
    """Link the memory's entities and write its edges; returns the linked entity ids in `named` order."""
    ids = link_entities(graph, workspace_id, named)
    by_name: dict[str, str] = {}
    for item in named:
        by_name.setdefault(item[1], ids[item])  # a name in two categories: relations use its first category
    records = tuple(relation_record(by_name[r.from_], by_name[r.to], r) for r in relations)
    if records:
        graph.upsert(workspace_id, GraphBatch(relations=records))
    return [ids[item] for item in named]
