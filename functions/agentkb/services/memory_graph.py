"""Memories in the one knowledge graph: resolve or create their entities, write their weighted relations."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from agentkb.models.graph import EntityRecord, GraphBatch, GraphMatchQuery, RelationRecord, identity_fingerprint
from agentkb.models.graph import normalise_text as normalise
from agentkb.models.memory import MemoryRelation
from agentkb.ports import GraphStore

EXACT_TIER = 3


def _digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def find_entity(graph: GraphStore, workspace_id: str, kind: str, name: str) -> str | None:
    """The entity of that kind whose label, identity key or an alias equals the name (case-insensitive)."""
    query = GraphMatchQuery(workspace_id=workspace_id, text=normalise(name), matching_terms=(), boost_terms=(),
                            coverage_bonus=0, limit=5, kind=kind)
    exact = [m for m in graph.match_entities(query).matches if m.tier >= EXACT_TIER]
    return exact[0].entity_id if exact else None


def resolve_entities(graph: GraphStore, workspace_id: str,
                     named: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(kind, name) -> entity id, for the entities that already exist in the workspace's graph."""
    out: dict[tuple[str, str], str] = {}
    for kind, name in named:
        found = find_entity(graph, workspace_id, kind, name)
        if found is not None:
            out[(kind, name)] = found
    return out


def new_entity(kind: str, name: str) -> EntityRecord:
    """A workspace-scope entity first named by a memory (deterministic id: retries create nothing new)."""
    return EntityRecord(id=f"mem-{kind}:{_digest(kind, normalise(name))[:20]}", kind=kind, label=name,
                        project_id=None, identity_key=name, identity_scope="workspace", aliases=(),
                        fingerprint=identity_fingerprint(kind, None, name), attributes={"origin": "memory"})


def relation_record(from_id: str, to_id: str, relation: MemoryRelation) -> RelationRecord:
    return RelationRecord(id=f"mem-rel:{_digest(from_id, relation.kind, to_id)[:24]}", from_id=from_id, to_id=to_id,
                          kind=relation.kind, derivation="authored", trust="observed", confidence="medium",
                          weight=float(relation.weight))


def write_memory_graph(graph: GraphStore, workspace_id: str, named: Sequence[tuple[str, str]],
                       relations: Sequence[MemoryRelation]) -> list[str]:
    """Upsert the memory's entities and relations in one graph batch; returns the entity ids in `named` order."""
    existing = resolve_entities(graph, workspace_id, named)
    created = [new_entity(kind, name) for kind, name in named if (kind, name) not in existing]
    ids = {**existing, **{(e.kind, e.label): e.id for e in created}}
    by_name: dict[str, str] = {}
    for (_, name), eid in sorted(ids.items(), key=lambda item: named.index(item[0])):
        by_name.setdefault(name, eid)  # a name in two categories: relations use its first category
    records = tuple(relation_record(by_name[r.from_], by_name[r.to], r) for r in relations)
    if created or records:
        graph.upsert(workspace_id, GraphBatch(entities=tuple(created), relations=records))
    return [ids[item] for item in named]
