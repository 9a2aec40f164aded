"""`POST /ob1/writeback`: each payload entry becomes a typed memory with provenance, retention, visibility and review
state, all stored in one atomic batch, or none when the firewall refuses any of them.

Idempotency: the batch's memory names derive from (principal, idempotency key), so a replay finds the first
answer by name and stores nothing; without a key the key is derived from runtime, task, step and the payload, as
OB1 does. A concurrent duplicate loses the name race (Conflict) and answers the winner's memories.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from agentkb.errors import BadRequest, Conflict, DependencyError, NotFound, ServiceUnavailable
from agentkb.models.domain import Principal
from agentkb.models.memory.api import ENTITY_KINDS, MemoryRecord, parse_timestamp
from agentkb.models.memory.detail import MemoryDetail, MemoryListQuery
from agentkb.models.ob1.api import MAX_WRITEBACK_ROWS, Ob1SourceRef, Ob1WritebackRequest
from agentkb.models.ob1.responses import Ob1WritebackResponse
from agentkb.ports.memory import MemoryStore
from agentkb.services.memory.firewall import scan_payload
from agentkb.services.memory.graph_links import write_memory_graph
from agentkb.services.memory.service import MemoryDeps
from agentkb.services.ob1.firewall import UnsafeWriteback, enforce_writeback_firewall
from agentkb.services.ob1.memory import ORIGIN, facets_of, iso, response_memory, stored_state, summarise

MAX_ROWS = MAX_WRITEBACK_ROWS  # memories per write-back, whole or absent on both engines
ROW_FIELDS = (("decisions", "decision"), ("outputs", "output"), ("lessons", "lesson"), ("constraints", "constraint"),
              ("unresolved_questions", "open_question"), ("next_steps", "next_step"), ("failures", "failure"))
DAY_S = 86_400
RETRY_AFTER_S = 5



def source_time(refs: Sequence[Ob1SourceRef]) -> str | None:
    """OB1's `source_refs[0].timestamp` as the memory's occurred_at (RFC 3339 UTC); OB1 accepts any string there,
    so one that is not an ISO 8601 date or date-time says no time."""
    stamp = refs[0].timestamp if refs else None
    try:
        return iso(parse_timestamp(stamp)) if stamp else None
    except ValueError:
        return None

def response_family(schema_version: str, kind: str) -> str:
    """The response schema version in the request's family (`openclaw` alias or runtime-neutral)."""
    family = "openclaw" if ".openclaw." in schema_version else "agent_memory"
    return f"openbrain.{family}.{kind}_response.v1"


Row = tuple[str, str, str, dict[str, Any] | None]


def payload_rows(request: Ob1WritebackRequest) -> list[Row]:
    """(memory type, request path, content, artifact) of every non-blank payload entry, in payload order."""
    payload = request.memory_payload
    rows: list[Row] = [(kind, f"memory_payload.{name}.{i}", text.strip(), None) for name, kind in ROW_FIELDS
            for i, text in enumerate(getattr(payload, name)) if text.strip()]
    for i, a in enumerate(payload.artifacts):
        content = f"{a.kind}: {a.description or a.uri}\n{a.uri}"
        rows.append(("artifact_reference", f"memory_payload.artifacts.{i}", content, a.model_dump(mode="json")))
    return rows


def audience(request: Ob1WritebackRequest) -> str:
    """OB1's visibility settings -> ours: a project memory when the project is shared, then channel, workspace, and
    personal (the writer's own) when nothing is shared."""
    v = request.visibility
    if request.project_id and (v.project or "shared") not in ("none", "private"):
        return "project"
    if request.channel.id and v.channel == "shared":
        return "channel"
    return "workspace" if v.workspace == "shared" else "personal"


def _key_prefix(request: Ob1WritebackRequest, principal: Principal) -> str:
    key = request.idempotency_key
    if key is None:
        payload = json.dumps(request.memory_payload.model_dump(mode="json"), sort_keys=True)
        key = ":".join((request.runtime.name, request.task_id or "taskless", request.step_id or "step",
                        hashlib.sha256(payload.encode()).hexdigest()))
    digest = hashlib.sha256(json.dumps([principal.id, key]).encode()).hexdigest()[:32]
    return f"ob1/{digest}/"


def _state(request: Ob1WritebackRequest, now: float, artifact: dict[str, Any] | None) -> dict[str, Any]:
    p = request.provenance
    trusted = p.default_status in ("user_confirmed", "imported") and not p.requires_review
    days = [d for d in (request.retention.ttl_days, request.retention.stale_after_days) if d]
    used = request.models_used[0] if request.models_used else None
    return {
        "origin": ORIGIN, "review_status": "confirmed" if trusted else "pending", "lifecycle_status": "active",
        "provenance_status": p.default_status, "confidence": p.confidence,
        "created_by": "import" if p.default_status == "imported" else "agent", "can_use_as_instruction": trusted,
        "can_use_as_evidence": True, "requires_user_confirmation": not trusted,
        "last_confirmed_at": iso(now) if trusted else None,
        "stale_after": iso(now + request.retention.stale_after_days * DAY_S)
        if request.retention.stale_after_days else None,
        "expires_at": iso(now + min(days) * DAY_S) if days else None,
        "runtime": request.runtime.model_dump(mode="json"), "provider": used.provider if used else None,
        "model": used.model if used else None, "task_id": request.task_id, "flow_id": request.flow_id,
        "step_id": request.step_id, "channel": request.channel.model_dump(mode="json"),
        "source_refs": [r.model_dump(mode="json") for r in request.source_refs],
        "artifacts": [artifact] if artifact else [],
        "models_used": [m.model_dump(mode="json") for m in request.models_used],
        "retention": request.retention.model_dump(mode="json"), "schema_version": request.schema_version,
        "content_hash": request.content_hash, "review_history": [], "relations": []}


def labels_of(extra: dict[str, Any], memory_type: str) -> dict[str, str]:
    """The flat strings /ob1/memories filters on."""
    labels = {"origin": ORIGIN, "review_status": extra["review_status"], "lifecycle_status": extra["lifecycle_status"],
              "runtime_name": (extra.get("runtime") or {}).get("name") or "unknown", "memory_type": memory_type}
    if extra.get("task_id"):
        labels["task_id"] = extra["task_id"]
    return labels


def _replay(store: MemoryStore, workspace_id: str, prefix: str, principal: str) -> list[MemoryDetail]:
    """The write-back's own memories: another principal's shared memories under these names are not its answer."""
    page = store.list_memories(MemoryListQuery(workspace_id, name_prefix=prefix, labels={"origin": ORIGIN},
                                               limit=MAX_ROWS, viewer=principal))  # /v1 memories carry no labels
    return sorted((d for d in page.items if d.owner_id == principal), key=lambda d: d.memory_id)


def writeback(request: Ob1WritebackRequest, principal: Principal, deps: MemoryDeps) -> Ob1WritebackResponse:
    """Store the payload's memories (or replay the first answer of the same idempotency key)."""
    ws = request.workspace_id
    if not principal.can_reach(ws):
        raise NotFound("Workspace not found")
    rows = payload_rows(request)
    if not rows or len(rows) > MAX_ROWS:
        raise BadRequest(f"memory_payload must hold 1..{MAX_ROWS} non-blank entries", details=[
            {"path": "memory_payload", "message": f"{len(rows)} entries"}])
    enforce_writeback_firewall([(kind, path, text) for kind, path, text, _ in rows])
    outside = request.model_dump(mode="json", exclude={"memory_payload"})
    findings = scan_payload({**outside, "memory_payload": {"entities": request.memory_payload.entities}})
    if findings:
        raise UnsafeWriteback([{"reason": "api_key", "memory_type": "", "path": f["path"]} for f in findings[:50]])
    prefix = _key_prefix(request, principal)
    found = _replay(deps.store, ws, prefix, principal.id)
    if not found:
        found = _store(request, principal, deps, rows, prefix)
    return Ob1WritebackResponse(schema_version=response_family(request.schema_version, "writeback"),
                                memories=[response_memory(d) for d in found])


def _store(request: Ob1WritebackRequest, principal: Principal, deps: MemoryDeps,
           rows: list[Row], prefix: str) -> list[MemoryDetail]:
    ws, now = request.workspace_id, deps.clock()
    try:
        vectors = deps.embedder.embed_documents([text for _, _, text, _ in rows])
    except DependencyError as exc:
        raise ServiceUnavailable("The embedding model is unavailable", retry_after_s=RETRY_AFTER_S,
                                 details={"code": exc.code}) from exc
    named = list(dict.fromkeys((ENTITY_KINDS[cat], name.strip()) for cat, names in
                               request.memory_payload.entities.items() if cat in ENTITY_KINDS
                               for name in names if name.strip()))
    entity_ids = tuple(dict.fromkeys(write_memory_graph(deps.graph, ws, named, []))) if named else ()
    visibility = audience(request)
    # Past ttl_days or stale_after_days (the earlier) a memory is stale: recalled only with include_stale.
    expiry_days = min((d for d in (request.retention.ttl_days, request.retention.stale_after_days) if d), default=None)
    records = []
    for index, ((kind, _path, text, artifact), vector) in enumerate(zip(rows, vectors, strict=True)):
        extra = _state(request, now, artifact)
        confirmed, stale = facets_of(stored_state(extra))
        records.append(MemoryRecord(
            workspace_id=ws, project_id=request.project_id, visibility=visibility, owner_id=principal.id,
            channel_id=request.channel.id, type=kind, name=f"{prefix}{index:02d}", description=summarise(text),
            body=text, confirmed=confirmed, stale=stale,
            valid_until=now + expiry_days * DAY_S if expiry_days else None, sensitivity=0,
            source=request.source_refs[0].uri if request.source_refs else None,
            request_hash=hashlib.sha256(text.encode()).hexdigest(), created_at=iso(now) or "", updated_at=now,
            embedding=vector, entity_ids=entity_ids, labels=labels_of(extra, kind), extra=extra,
            occurred_at=source_time(request.source_refs)))
    try:
        stored = deps.store.insert_batch(records)
    except Conflict:  # the same key was written concurrently: its answer is ours
        replay = _replay(deps.store, ws, prefix, principal.id)
        if not replay:
            raise
        return replay
    found = deps.store.get_many(ws, [s.memory_id for s in stored])
    return [found[s.memory_id] for s in stored if s.memory_id in found]
