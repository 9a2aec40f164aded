"""Bounded, deterministic, proof-carrying knowledge-graph search (`POST /v1/graph/search`)."""

from __future__ import annotations

from typing import Any

from agentkb.models.graph.api import GraphSearchRequest
from agentkb.models.graph.records import EntityRecord, GraphMatchQuery, RelationRecord
from agentkb.models.graph.text import normalise_text
from agentkb.ports.graph import GraphStore
from agentkb.services.graph.budget import (
    AGENT_LIMITS,
    OMITTED_KEYS,
    AgentLimits,
    cap_entity,
    cap_proof_ids,
    interleave,
    share_round_robin,
)
from agentkb.services.graph.rank import coverage_bonus, query_terms, split_terms, term_weights

SCHEMA_VERSION = "workspace-knowledge-search.v1"
RELATIONS_PER_ENTITY = 16  # 1-hop cap per returned entity, applied in the store's query


def search_graph(store: GraphStore, request: GraphSearchRequest,
                 limits: AgentLimits = AGENT_LIMITS) -> dict[str, Any]:
    """Rank entities (exact > prefix > rare terms), attach their proven 1-hop neighbourhood and its proofs."""
    ws = request.workspaceId
    terms = query_terms(request.query)
    entity_count, df = store.term_statistics(ws, terms)
    matching, boost = split_terms(term_weights(terms, df, entity_count), df, entity_count)
    page = store.match_entities(GraphMatchQuery(
        workspace_id=ws, text=normalise_text(request.query), matching_terms=matching, boost_terms=boost,
        coverage_bonus=coverage_bonus(len(terms)), limit=request.limit, kind=request.kind,
        project_id=request.projectId))
    ids = [m.entity_id for m in page.matches]
    entities = store.entities(ws, ids)
    per_entity = store.proven_relations(ws, ids, RELATIONS_PER_ENTITY)
    relations = interleave([per_entity.get(i, []) for i in ids], key=lambda r: r.id)
    totals = store.neighbourhood_totals(ws, ids)

    body: dict[str, Any] = {"schemaVersion": SCHEMA_VERSION, "graphSourceHash": store.source_hash(ws),
                            "query": request.query, "kind": request.kind}
    if request.projectId is not None:
        body["projectId"] = request.projectId
    body.update({"limit": request.limit, "totalMatches": page.total})
    if request.projection == "agent":
        omitted = dict.fromkeys(OMITTED_KEYS, 0)
        entity_docs = [cap_entity(e.doc(), limits, omitted) for e in entities]
        relation_docs = [cap_proof_ids(r.doc(), limits, omitted) for r in relations[:limits.relations]]
        related = _related(store, ws, ids, relations[:limits.relations])
        related_docs = related[:limits.relatedEntities]
        cited = _cited([*entities, *relations[:limits.relations]])
        proof_ids = share_round_robin([d["proofIds"] for d in (*entity_docs, *relation_docs)], limits.proofs)
        omitted.update(entities=page.total - len(entities), relations=totals.relations - len(relation_docs),
                       relatedEntities=totals.related_entities - len(related_docs),
                       proofs=len(cited) - len(proof_ids))
        truncated = any(omitted.values())
    else:
        entity_docs = [e.doc() for e in entities]
        relation_docs = [r.doc() for r in relations]
        related_docs = _related(store, ws, ids, relations)
        proof_ids = _cited([*entities, *relations])
        truncated = (page.total > len(entities) or totals.relations > len(relation_docs)
                     or totals.related_entities > len(related_docs))
    body.update({"truncated": truncated, "entities": entity_docs, "relatedEntities": related_docs,
                 "relations": relation_docs, "proofs": [p.doc() for p in store.proofs(ws, proof_ids)]})
    if request.projection == "agent":
        body["budget"] = {"mode": "agent", "limits": limits.as_dict(), "omitted": omitted}
    return body


def _cited(items: list[EntityRecord | RelationRecord]) -> list[str]:
    """Distinct proof ids in citation order (items in order, each item's ids in order)."""
    return list(dict.fromkeys(pid for item in items for pid in item.proof_ids))


def _related(store: GraphStore, ws: str, ids: list[str], relations: list[RelationRecord]) -> list[dict[str, Any]]:
    """The other endpoints of the relations, in first-seen order, as {id, kind, label, projectId?}."""
    returned = set(ids)
    others = list(dict.fromkeys(
        end for r in relations for end in (r.from_id, r.to_id) if end not in returned))
    out = []
    for e in store.entities(ws, others):
        item = {"id": e.id, "kind": e.kind, "label": e.label}
        if e.project_id:
            item["projectId"] = e.project_id
        out.append(item)
    return out
