"""Context snapshots: gather, govern, order, pack and hash the context of one agent attempt; store it once.

Order: the task, then policy and instructions items (request order), then everything retrieved or handed in,
by reciprocal rank fusion across sources. Governance before packing: classification above the scope's ceiling,
a trust tier the scope does not allow (`denied`), stale or superseded sources, repeated content. Then greedy
packing under `maxTokens - reservedForOutput`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentkb.errors import BadRequest, Conflict, IdempotencyKeyReused, NotFound, OperationInProgress
from agentkb.models.domain import Principal
from agentkb.models.idempotency import IdempotentCall
from agentkb.models.snapshot import CLASSIFICATION_ORDER, Candidate, CreateSnapshotRequest, StoredSnapshot
from agentkb.ports.embedding import Tokenizer
from agentkb.ports.invocation import Idempotency, RemainingTime
from agentkb.services.ingest.chunking import content_hash
from agentkb.services.search.fusion import fuse_reciprocal_rank
from agentkb.services.snapshot.budget import Packing, pack
from agentkb.services.snapshot.canonical_json import sha256_hex
from agentkb.services.snapshot.sources import (
    SourceDeps,
    graph_candidates,
    inline_candidates,
    knowledge_candidates,
    memory_candidates,
    task_candidate,
)

PINNED_CLASSES = ("task", "policy", "instructions")
# Snapshot ids derive from (workspace, run, attempt): the same attempt always names the same snapshot.
SNAPSHOT_NAMESPACE = uuid.UUID("5b0c7a43-2d0e-4d55-9a86-0c1f3d3e8a61")
IDEMPOTENCY_SCOPE = "snapshot"
DIFFERENT_REQUEST = "A snapshot for this runId and attemptId was already built from a different request"
IN_PROGRESS = "A snapshot for this runId and attemptId is being built; retry shortly"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class SnapshotDeps:
    sources: SourceDeps
    tokenizer: Tokenizer
    idempotency: Idempotency  # one build per (workspace, run, attempt) at a time, across processes
    now: Callable[[], str] = _now  # the stored row's createdAt only: never part of the snapshot
    deadline: RemainingTime | None = None  # the invocation's deadline: an in-progress claim lapses with it


@dataclass(frozen=True)
class SnapshotOutcome:
    status: int  # 201 built now, 200 replayed
    body: bytes


def snapshot_id_for(workspace_id: str, run_id: str, attempt_id: str) -> str:
    return str(uuid.uuid5(SNAPSHOT_NAMESPACE, f"{workspace_id}\n{run_id.lower()}\n{attempt_id.lower()}"))


def snapshot_hash(snapshot: dict[str, Any]) -> str:
    """Hex sha256 of the canonical JSON of the snapshot without its `hash` field."""
    return sha256_hex({k: v for k, v in snapshot.items() if k != "hash"})


def snapshot_bytes(snapshot: dict[str, Any]) -> bytes:
    """The stored (and served) bytes of a snapshot document: compact UTF-8 JSON in the document's own key order."""
    return json.dumps(snapshot, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def request_fingerprint(request: CreateSnapshotRequest) -> str:
    try:
        return sha256_hex(request.model_dump(mode="json", by_alias=True))
    except ValueError as exc:
        raise BadRequest("Strings must be valid Unicode",
                         details=[{"path": "body", "message": "lone surrogate in a string"}]) from exc


def create_snapshot(request: CreateSnapshotRequest, principal: Principal, deps: SnapshotDeps) -> SnapshotOutcome:
    """Build and store the snapshot of (workspace, run, attempt), or replay the stored one for the same request.

    Concurrent identical builds do not both compute: the first claims the idempotency key, the others answer 503
    (OperationInProgress, Retry-After) until it is stored, then 200 with its bytes.
    """
    ws = request.scope.workspaceId
    if not principal.can_reach(ws):
        raise NotFound("Workspace not found")
    fingerprint = request_fingerprint(request)
    snapshot_id = snapshot_id_for(ws, request.runId, request.attemptId)
    store = deps.sources.snapshots
    existing = store.get(snapshot_id)
    if existing is not None:
        return _replay(existing, fingerprint)
    built: list[SnapshotOutcome] = []

    def build() -> dict[str, Any]:
        built.append(_build_and_store(request, principal, deps, snapshot_id, fingerprint))
        return {"snapshotId": snapshot_id}  # the record stays small: a replay re-reads the snapshot store

    try:
        deps.idempotency.run_once(IdempotentCall(IDEMPOTENCY_SCOPE, snapshot_id, fingerprint), build, deps.deadline)
    except IdempotencyKeyReused as exc:
        raise Conflict(DIFFERENT_REQUEST) from exc
    except OperationInProgress as exc:
        raise OperationInProgress(IN_PROGRESS) from exc
    if built:
        return built[0]
    stored = store.get(snapshot_id)  # replayed: the run that completed the key stored the snapshot
    if stored is None:  # a record without its snapshot (deleted since): build it now; put_if_absent still guards
        return _build_and_store(request, principal, deps, snapshot_id, fingerprint)
    return _replay(stored, fingerprint)


def _build_and_store(request: CreateSnapshotRequest, principal: Principal, deps: SnapshotDeps, snapshot_id: str,
                     fingerprint: str) -> SnapshotOutcome:
    body = assemble(request, principal, deps, snapshot_id)
    raw = snapshot_bytes(body)
    stored = deps.sources.snapshots.put_if_absent(StoredSnapshot(
        snapshot_id, request.scope.workspaceId, request.runId, request.attemptId, fingerprint, raw, deps.now()))
    if stored.body != raw:  # a concurrent request with the same ids stored first
        return _replay(stored, fingerprint)
    return SnapshotOutcome(201, raw)


def _replay(stored: StoredSnapshot, fingerprint: str) -> SnapshotOutcome:
    if stored.request_hash != fingerprint:
        raise Conflict(DIFFERENT_REQUEST)
    return SnapshotOutcome(200, stored.body)


def get_snapshot(snapshot_id: str, principal: Principal, deps: SnapshotDeps) -> bytes:
    """The stored bytes; a missing snapshot and one in a workspace the caller cannot reach are the same 404."""
    stored = deps.sources.snapshots.get(snapshot_id.lower())
    if stored is None or not principal.can_reach(stored.workspace_id):
        raise NotFound("Snapshot not found")
    return stored.body


def ordered_candidates(request: CreateSnapshotRequest, principal: Principal,
                       deps: SnapshotDeps) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """Pinned items first, then every source fused by reciprocal rank; plus the sources the scope kept shut."""
    task = task_candidate(request)
    inline = inline_candidates(request, deps.sources)
    pinned = [task] if task else []
    for cls in PINNED_CLASSES[1:]:
        pinned.extend(c for c in inline if c.item_class == cls)
    gathered = [knowledge_candidates(request, principal, deps.sources),
                memory_candidates(request, principal, deps.sources), graph_candidates(request, deps.sources)]
    legs = [*(leg for g in gathered for leg in g.legs), [c for c in inline if c.item_class not in PINNED_CLASSES]]
    by_key = {c.key: c for leg in legs for c in leg}
    fused = fuse_reciprocal_rank([[c.key for c in leg] for leg in legs if leg])
    return pinned + [by_key[key] for key, _ in fused], [s for g in gathered for s in g.skipped]


def governance_reason(candidate: Candidate, max_classification: str, allowed_tiers: set[str] | None,
                      seen: set[str]) -> str | None:
    """Why a candidate may not enter the snapshot (before budgeting), or None."""
    if candidate.secret or CLASSIFICATION_ORDER[candidate.classification] > CLASSIFICATION_ORDER[max_classification]:
        return "classification"
    if allowed_tiers is not None and candidate.trust_tier not in allowed_tiers:
        return "denied"
    if candidate.stale:
        return "stale"
    if content_hash(candidate.content) in seen:
        return "duplicate"
    return None


def _exclusion(candidate: Candidate, reason: str) -> dict[str, Any]:
    exclusion = {"sourceId": candidate.source_id, "reason": reason, "class": candidate.item_class,
                 "chunkId": candidate.chunk_id}
    return {**exclusion, "secretDetected": True} if candidate.secret else exclusion  # says why, never what


def assemble(request: CreateSnapshotRequest, principal: Principal, deps: SnapshotDeps,
             snapshot_id: str) -> dict[str, Any]:
    """The snapshot document (with its hash) for a request; deterministic for the same inputs and index."""
    scope = request.scope
    ordered, skipped = ordered_candidates(request, principal, deps)
    exclusions: list[dict[str, Any]] = [{"sourceId": source, "reason": reason} for source, reason in skipped]
    allowed: set[str] | None = set(scope.allowedTrustTiers) if scope.allowedTrustTiers is not None else None
    seen: set[str] = set()
    admitted: list[tuple[Candidate, int]] = []
    for candidate in ordered:
        reason = governance_reason(candidate, scope.maxClassification, allowed, seen)
        if reason is not None:
            exclusions.append(_exclusion(candidate, reason))
            continue
        seen.add(content_hash(candidate.content))
        admitted.append((candidate, deps.tokenizer.count(candidate.content)))
    room = request.budget.maxTokens - request.budget.reservedForOutput
    packing = pack(admitted, room, deps.tokenizer)
    exclusions.extend(_exclusion(c, "budget") for c in packing.over_budget)
    return _document(request, principal, snapshot_id, packing, exclusions)


def _scope(request: CreateSnapshotRequest, principal: Principal) -> dict[str, Any]:
    scope = request.scope
    out: dict[str, Any] = {"workspaceId": scope.workspaceId}
    if scope.projectId is not None:
        out["projectId"] = scope.projectId
    if scope.knowledgeBaseIds is not None:
        out["knowledgeBaseIds"] = list(scope.knowledgeBaseIds)
    out["maxClassification"] = scope.maxClassification
    if scope.allowedTrustTiers is not None:
        out["allowedTrustTiers"] = list(scope.allowedTrustTiers)
    out["principal"] = principal.id
    return out


def _items(packing: Packing) -> list[dict[str, Any]]:
    items = []
    for rank, p in enumerate(packing.packed, start=1):
        c = p.candidate
        item: dict[str, Any] = {"class": c.item_class, "sourceId": c.source_id, "sourceRevision": c.source_revision,
                                "chunkId": c.chunk_id}
        if c.index_version is not None:
            item["indexVersion"] = c.index_version
        if c.embedding_profile is not None:
            item["embeddingProfile"] = c.embedding_profile
        item.update({"tokens": p.tokens, "rank": rank, "trustTier": c.trust_tier, "classification": c.classification,
                     "compressed": p.compressed, "provenance": c.provenance, "content": p.content})
        items.append(item)
    return items


def _document(request: CreateSnapshotRequest, principal: Principal, snapshot_id: str, packing: Packing,
              exclusions: list[dict[str, Any]]) -> dict[str, Any]:
    doc: dict[str, Any] = {"snapshotId": snapshot_id, "runId": request.runId}
    if request.stepId is not None:
        doc["stepId"] = request.stepId
    doc.update({"attemptId": request.attemptId, "scope": _scope(request, principal)})
    if request.strategy is not None:
        doc["strategy"] = request.strategy
    doc["budget"] = {"maxTokens": request.budget.maxTokens, "usedTokens": packing.used_tokens,
                     "reservedForOutput": request.budget.reservedForOutput}
    doc["items"] = _items(packing)
    doc["exclusions"] = exclusions
    doc["hash"] = snapshot_hash(doc)
    return doc
