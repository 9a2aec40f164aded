"""Graph writes (`POST /v1/graph`, `agentkb graph import`): validate the whole batch, then upsert it atomically."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from agentkb.errors import BadRequest, Conflict
from agentkb.models.graph.api import GraphWriteCounts, GraphWriteRequest, GraphWriteResponse
from agentkb.models.graph.records import EntityRecord, GraphBatch, ProofRecord, RelationRecord
from agentkb.models.graph.text import canonical_json
from agentkb.ports.graph import GraphStore

MAX_REPORTED_ISSUES = 50
# One entity is one DynamoDB item holding its document twice (doc + canon) under the 400 KB item cap: larger
# entities are refused by both engines alike (a 400 naming the entity), never a 503 on AWS that retries cannot fix.
MAX_ENTITY_BYTES = 128 * 1024


def parse_graph_write(payload: Any) -> GraphWriteRequest:
    """Validate a raw batch (CLI, direct callers); issues name paths only, never echo the input."""
    try:
        return GraphWriteRequest.model_validate(payload)
    except ValidationError as exc:
        issues = [{"path": ".".join(str(p) for p in err["loc"]), "message": err["msg"]}
                  for err in exc.errors(include_input=False, include_url=False)]
        raise BadRequest("Invalid graph batch", details={"issues": issues[:MAX_REPORTED_ISSUES]}) from exc


def upsert_graph(store: GraphStore, request: GraphWriteRequest) -> GraphWriteResponse:
    """Reject the batch (400, nothing written) unless every reference resolves; else upsert and return counts."""
    ws = request.workspaceId
    issues: list[dict[str, str]] = []
    entities = [_entity_record(request, i, issues) for i in range(len(request.entities))]
    for i, e in enumerate(entities):
        if len(canonical_json(e.doc()).encode("utf-8")) > MAX_ENTITY_BYTES:
            issues.append({"path": f"entities.{i}", "message": f"larger than {MAX_ENTITY_BYTES // 1024} KB"})
    _check_references(store, request, issues)
    _check_identities(store, ws, entities, issues)
    if issues:
        raise BadRequest("Invalid graph batch", details={"issues": issues[:MAX_REPORTED_ISSUES]})
    batch = GraphBatch(
        entities=tuple(entities),
        relations=tuple(RelationRecord(id=r.id, from_id=r.from_, to_id=r.to, kind=r.kind, derivation=r.derivation,
                                       trust=r.trust, confidence=r.confidence, proof_ids=tuple(r.proofIds))
                        for r in request.relations),
        proofs=tuple(ProofRecord(id=p.id, provider=p.provider, artifact=p.artifact, observed_at=p.observedAt,
                                 derivation=p.derivation, trust=p.trust, confidence=p.confidence,
                                 freshness=p.freshness, content_hash=p.contentHash, pointer=p.pointer, line=p.line,
                                 column=p.column, detail=p.detail) for p in request.proofs))
    counts = store.upsert(ws, batch)
    return GraphWriteResponse(data=GraphWriteCounts(entities=counts.entities, relations=counts.relations,
                                                    proofs=counts.proofs, graphSourceHash=store.source_hash(ws)))


def _check_references(store: GraphStore, request: GraphWriteRequest, issues: list[dict[str, str]]) -> None:
    """Every relation end names an entity and every proof id a proof, in the batch or already stored."""
    ws = request.workspaceId
    batch_entities = {e.id for e in request.entities}
    endpoints = {end for r in request.relations for end in (r.from_, r.to)}
    known = batch_entities | store.existing_entity_ids(ws, sorted(endpoints - batch_entities))
    for i, rel in enumerate(request.relations):
        for name, end in (("from", rel.from_), ("to", rel.to)):
            if end not in known:
                issues.append({"path": f"relations.{i}.{name}", "message": "unknown entity"})
    batch_proofs = {p.id for p in request.proofs}
    cited = {pid for e in request.entities for pid in e.proofIds} | {
        pid for r in request.relations for pid in r.proofIds}
    known_proofs = batch_proofs | store.existing_proof_ids(ws, sorted(cited - batch_proofs))
    sections: tuple[tuple[str, Sequence[Any]], ...] = (("entities", request.entities),
                                                         ("relations", request.relations))
    for section, items in sections:
        for i, item in enumerate(items):
            for j, pid in enumerate(item.proofIds):
                if pid not in known_proofs:
                    issues.append({"path": f"{section}.{i}.proofIds.{j}", "message": "unknown proof"})


def _entity_record(request: GraphWriteRequest, i: int, issues: list[dict[str, str]]) -> EntityRecord:
    e = request.entities[i]
    project = e.projectId
    if e.identity.scope == "project":
        project = project or request.projectId
        if project is None:
            issues.append({"path": f"entities.{i}.projectId", "message": "a project-scope entity needs a projectId"})
        elif request.projectId is not None and project != request.projectId:
            issues.append({"path": f"entities.{i}.projectId", "message": "differs from the batch's projectId"})
    elif project is not None:
        issues.append({"path": f"entities.{i}.projectId", "message": "a workspace-scope entity has no projectId"})
    return EntityRecord(id=e.id, kind=e.kind, label=e.label, project_id=project, identity_key=e.identity.key,
                        identity_scope=e.identity.scope, aliases=tuple(e.identity.aliases),
                        fingerprint=e.identity.fingerprint,
                        attributes=dict(e.attributes), proof_ids=tuple(e.proofIds))


def _check_identities(store: GraphStore, ws: str, entities: list[EntityRecord], issues: list[dict[str, str]]) -> None:
    """One entity per (kind, project, identity key): a clash inside the batch is a 400, with the store a 409."""
    holders: dict[tuple[str, str, str], str] = {}
    for i, e in enumerate(entities):
        key = (e.kind, e.project_id or "", e.identity_key)
        if holders.setdefault(key, e.id) != e.id:
            issues.append({"path": f"entities.{i}.identity.key", "message": "identity key used by another entity"})
    owners = store.identity_owners(ws, list(holders))
    if not issues and any(owners.get(key, eid) != eid for key, eid in holders.items()):
        raise Conflict("An entity with the same kind and identity key already exists")


def upsert_entity_by_identity(store: GraphStore, workspace_id: str, entity: EntityRecord) -> str:
    """Upsert by (kind, project, identity key); returns the id already stored for that identity, or entity.id."""
    identity = (entity.kind, entity.project_id or "", entity.identity_key)
    existing = store.identity_owners(workspace_id, [identity]).get(identity)
    if existing is not None and existing != entity.id:
        entity = dataclasses.replace(entity, id=existing)
    store.upsert(workspace_id, GraphBatch(entities=(entity,)))
    return entity.id
