"""The memory write path (`POST /v1/memories`): firewall, audience checks, idempotency, embed, graph, store."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agentkb.errors import BadRequest, Conflict, DependencyError, NotFound, NotOwner, ServiceUnavailable
from agentkb.models.domain import Principal
from agentkb.models.graph.text import canonical_json
from agentkb.models.memory.api import (
    IdempotencyRecord,
    MemoryRecord,
    MemoryWriteRequest,
    MemoryWriteResponse,
    StoredMemory,
    parse_timestamp,
)
from agentkb.models.memory.detail import name_key
from agentkb.ports.embedding import Embedder
from agentkb.ports.graph import GraphStore
from agentkb.ports.memory import MemoryStore
from agentkb.services.memory.firewall import enforce_firewall
from agentkb.services.memory.graph_links import write_memory_graph

EMBED_RETRY_AFTER_S = 5


@dataclass(frozen=True)
class MemoryDeps:
    store: MemoryStore
    graph: GraphStore
    embedder: Embedder
    clock: Callable[[], float] = field(default=time.time)


@dataclass(frozen=True)
class MemoryWriteOutcome:
    status: int  # 201 a new revision; 200 an idempotent replay or an unchanged rewrite
    response: MemoryWriteResponse

    @classmethod
    def of(cls, status: int, stored: StoredMemory) -> MemoryWriteOutcome:
        """The answer about a stored revision (the store reads its summary back as the response's fields)."""
        return cls(status, MemoryWriteResponse.model_validate(stored.response))


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _check_audience(request: MemoryWriteRequest) -> None:
    needs = {"channel": ("channel_id", request.channel_id), "project": ("project_id", request.project_id)}
    if request.visibility in needs and not needs[request.visibility][1]:
        path = needs[request.visibility][0]
        raise BadRequest(f"{request.visibility} visibility requires {path}",
                         details=[{"path": path, "message": f"required for {request.visibility} visibility"}])


def _check_relations(request: MemoryWriteRequest, names: set[str]) -> None:
    issues = [{"path": f"relations.{i}.{end}", "message": "not a name listed in entities"}
              for i, r in enumerate(request.relations) for end, value in (("from", r.from_), ("to", r.to))
              if value.strip() not in names]
    if issues:
        raise BadRequest("Relations must join entities named in `entities`", details=issues[:20])


def memory_owner(visibility: str, requested: str | None, principal_id: str) -> str | None:
    """The owner a write stores. A principal writes only as itself: `owner_id` naming anyone else is refused on
    every visibility (403, nothing stored, and nothing said about that principal's names); a personal memory is
    the caller's, a shared one records the caller only when the request says so (its owner grants nothing)."""
    if requested is not None and requested != principal_id:
        raise NotOwner()
    return principal_id if visibility == "personal" else requested


def memory_text(request: MemoryWriteRequest) -> str:
    """What a memory's vector is made of."""
    return "\n".join(part for part in (request.name, request.description or "", request.body) if part)


def write_memory(request: MemoryWriteRequest, principal: Principal, deps: MemoryDeps) -> MemoryWriteOutcome:
    """Store a memory (a new revision when the name exists); readable by recall when this returns."""
    ws = request.workspace_id
    if not principal.can_reach(ws):
        raise NotFound("Workspace not found")
    owner = memory_owner(request.visibility, request.owner_id, principal.id)
    payload = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    enforce_firewall(payload)
    _check_audience(request)
    named = request.entities.named() if request.entities else []
    _check_relations(request, {name for _, name in named})
    payload.pop("idempotency_key", None)
    request_hash = hashlib.sha256(canonical_json({**payload, "owner_id": owner}).encode()).hexdigest()
    idempotency = None
    if request.idempotency_key is not None:
        found = deps.store.find_idempotent(ws, principal.id, request.idempotency_key)
        if found is not None:
            if found[0] != request_hash:
                raise Conflict("This idempotency key was used with a different request body")
            return MemoryWriteOutcome.of(200, found[1])
        idempotency = IdempotencyRecord(principal.id, request.idempotency_key, request_hash)
    live = deps.store.find_live(ws, name_key(request.visibility, owner, request.name))
    if live is not None and live.request_hash == request_hash and idempotency is None:
        return MemoryWriteOutcome.of(200, live)  # unchanged: no new revision
    try:
        vector = deps.embedder.embed_documents([memory_text(request)])[0]
    except DependencyError as exc:
        if not exc.retryable:
            raise  # permanent: 500 INTERNAL_ERROR (errors.dependency_failure), nothing written
        raise ServiceUnavailable("The embedding model is unavailable", retry_after_s=EMBED_RETRY_AFTER_S,
                                 details={"code": exc.code}) from exc
    entity_ids = write_memory_graph(deps.graph, ws, named, request.relations)
    now = deps.clock()
    sensitivity = request.sensitivity.bits() if request.sensitivity else 0
    record = MemoryRecord(
        workspace_id=ws, project_id=request.project_id, visibility=request.visibility, owner_id=owner,
        channel_id=request.channel_id, type=request.type, name=request.name, description=request.description or "",
        body=request.body, confirmed=request.confirmed, stale=request.stale,
        valid_until=parse_timestamp(request.valid_until) if request.valid_until else None,
        sensitivity=sensitivity, source=request.source, request_hash=request_hash, created_at=_iso(now),
        updated_at=now, embedding=vector, entity_ids=tuple(dict.fromkeys(entity_ids)),
        relation_count=len(request.relations),
        occurred_at=_iso(parse_timestamp(request.occurred_at)) if request.occurred_at else None)
    return MemoryWriteOutcome.of(201, deps.store.insert(record, idempotency))
