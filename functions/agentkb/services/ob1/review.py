"""OB1 review actions, usage reports, inspection, listings and recall traces.

A review action changes the memory in place (one atomic store update): its OB1 state, the eligibility facets that
follow from it (so the next recall of either surface sees it), its text and vector for `edit`, and an audit entry
(action, actor, notes, time, state before and after) appended to its review history.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from agentkb.errors import BadRequest, DependencyError, NotFound, NotOwner, ServiceUnavailable
from agentkb.models.digits import ascii_int
from agentkb.models.domain import Principal
from agentkb.models.memory.detail import MemoryChange, MemoryDetail, MemoryListQuery
from agentkb.models.ob1.api import Ob1ListFilter, Ob1ReviewRequest, Ob1UsageReport
from agentkb.models.ob1.responses import Ob1MemoryList, Ob1UsageAnswer
from agentkb.models.recall.trace import RecallTrace
from agentkb.ports.memory import MemoryStore, RecallTraceStore
from agentkb.services.memory.service import MemoryDeps
from agentkb.services.ob1.firewall import enforce_writeback_firewall
from agentkb.services.ob1.memory import (
    ORIGIN,
    facets_of,
    inspect_memory,
    iso,
    response_memory,
    state_of,
    stored_state,
    summarise,
)
from agentkb.services.ob1.writeback import labels_of

ALIASES = {"restrict": "restrict_scope", "stale": "mark_stale"}
AUDITED = ("review_status", "lifecycle_status", "provenance_status", "can_use_as_instruction", "can_use_as_evidence",
           "requires_user_confirmation", "visibility")
LINKED = {"supersede": "supersedes", "merge": "merged_into"}


@dataclass(frozen=True)
class ReviewDeps:
    """A review changes a memory as the memory writer does (its store, embedder and clock) and reads its traces."""

    memory: MemoryDeps
    traces: RecallTraceStore


def memory_id(raw: str) -> int:
    """A path's memory id; anything but a positive integer names no memory (404)."""
    value = ascii_int(raw) if len(raw) <= 18 else None
    if value is None:
        raise NotFound("Memory not found")
    return value


def reachable(store: MemoryStore, principal: Principal, workspace_id: str | None, raw_id: str) -> MemoryDetail:
    """The memory, if the caller's key reaches its workspace (an unreachable one is indistinguishable: 404)."""
    workspaces = [workspace_id] if workspace_id else list(principal.workspaces)
    for ws in workspaces:
        if ws != "*" and principal.can_reach(ws):
            # A personal memory is its owner's alone (absent for everyone else, like another workspace's data).
            found = store.get(ws, memory_id(raw_id), principal.id)
            if found is not None:
                return found
    raise NotFound("Memory not found")


def _transition(action: str, state: dict[str, Any], now: float, request: Ob1ReviewRequest) -> dict[str, Any]:
    """The OB1 state after a review action."""
    out = dict(state)
    if action == "confirm":
        out.update(review_status="confirmed", provenance_status="user_confirmed", can_use_as_instruction=True,
                   can_use_as_evidence=True, requires_user_confirmation=False, last_confirmed_at=iso(now),
                   lifecycle_status="active")
    elif action == "evidence_only":
        out.update(review_status="evidence_only", can_use_as_instruction=False, can_use_as_evidence=True,
                   requires_user_confirmation=False)
    elif action == "reject":
        out.update(review_status="rejected", lifecycle_status="rejected", can_use_as_instruction=False,
                   can_use_as_evidence=False)
    elif action == "mark_stale":
        out.update(review_status="stale", lifecycle_status="stale", can_use_as_instruction=False)
    elif action == "dispute":
        out.update(lifecycle_status="disputed", can_use_as_instruction=False)
    elif action in LINKED:
        out.update(lifecycle_status="superseded", can_use_as_instruction=False)
        if request.related_memory_id:
            out["relations"] = [*out.get("relations", []), {"relation": LINKED[action],
                                                            "memory_id": request.related_memory_id}]
    elif action == "restrict_scope":
        out.update(review_status="restricted")
    return out


def review(raw_id: str, request: Ob1ReviewRequest, principal: Principal, deps: ReviewDeps) -> dict[str, Any]:
    """Apply one review action; answers `{"memory": <the memory after>}`."""
    before = reachable(deps.memory.store, principal, None, raw_id)
    action, now = ALIASES.get(request.action, request.action), deps.memory.clock()
    if action == "edit" and request.content is None and request.summary is None:
        raise BadRequest("edit needs content or summary", details=[{"path": "content", "message": "required"}])
    if request.related_memory_id and action in LINKED:
        reachable(deps.memory.store, principal, before.workspace_id, request.related_memory_id)
    current = dict(before.extra) if before.extra.get("origin") == ORIGIN else _derived(before)
    after = _transition(action, current, now, request)
    visibility = _restricted_to(before, request) if action == "restrict_scope" else before.visibility
    entry = {"action": action, "actor_id": request.actor_id or principal.id, "actor_label": request.actor_label,
             "notes": request.notes, "at": iso(now),
             "before": {**{k: current.get(k) for k in AUDITED[:-1]}, "visibility": before.visibility},
             "after": {**{k: after.get(k) for k in AUDITED[:-1]}, "visibility": visibility}}
    after["review_history"] = [*current.get("review_history", []), entry]
    confirmed, stale = facets_of(stored_state(after))
    change = MemoryChange(confirmed=confirmed, stale=stale, visibility=visibility,
                          owner_id=_owner_after(before, visibility, principal), extra=after,
                          labels=labels_of(after, before.type))
    if action == "edit":
        change = _edited(change, before, request, deps)
    updated = deps.memory.store.update(before.workspace_id, before.memory_id, change)
    if updated is None:
        raise NotFound("Memory not found")
    return {"memory": inspect_memory(updated)}


def _owner_after(before: MemoryDetail, visibility: str, principal: Principal) -> str | None:
    """The owner a review leaves (None: unchanged). A shared memory restricted to personal becomes the reviewer's
    own: one its writer recorded as theirs is refused to anyone else, since it would land in (and, by a 409, probe)
    that principal's namespace. A personal memory reaches only its owner, so its owner stays."""
    if visibility != "personal" or before.visibility == "personal":
        return None
    if before.owner_id is not None and before.owner_id != principal.id:
        raise NotOwner("Only the memory's writer may restrict it to personal", path="visibility")
    return principal.id


def _restricted_to(before: MemoryDetail, request: Ob1ReviewRequest) -> str:
    """The narrower audience of restrict_scope (personal by default); it must name the memory's project/channel."""
    visibility = request.visibility or "personal"
    needs = {"project": before.project_id, "channel": before.channel_id}
    if visibility in needs and needs[visibility] is None:
        raise BadRequest(f"The memory has no {visibility} to restrict to",
                         details=[{"path": "visibility", "message": f"the memory has no {visibility}_id"}])
    return visibility


def _derived(d: MemoryDetail) -> dict[str, Any]:
    """The OB1 state a /v1 memory starts its review history from."""
    s = state_of(d)
    return {"origin": ORIGIN, "review_status": s.review_status, "lifecycle_status": s.lifecycle_status,
            "provenance_status": s.provenance_status, "confidence": s.confidence, "created_by": s.created_by,
            "can_use_as_instruction": s.can_use_as_instruction, "can_use_as_evidence": s.can_use_as_evidence,
            "requires_user_confirmation": s.requires_user_confirmation, "last_confirmed_at": s.last_confirmed_at,
            "stale_after": s.stale_after, "review_history": [], "relations": []}


def _edited(change: MemoryChange, before: MemoryDetail, request: Ob1ReviewRequest, deps: ReviewDeps) -> MemoryChange:
    body = request.content if request.content is not None else before.body
    description = request.summary or (summarise(body) if request.content is not None else before.description)
    enforce_writeback_firewall([(before.type, "content", body), (before.type, "summary", description)])
    try:
        vector = deps.memory.embedder.embed_documents([body])[0]
    except DependencyError as exc:
        raise ServiceUnavailable("The embedding model is unavailable", retry_after_s=5,
                                 details={"code": exc.code}) from exc
    return replace(change, description=description, body=body, embedding=vector, updated_at=deps.memory.clock())


def _own_trace(request_id: str, principal: Principal, deps: ReviewDeps) -> RecallTrace:
    """The caller's own recall trace. Anyone else's, and one stored without its principal, is a missing one: the
    same 404, so a trace id says nothing to another principal (its query, its personal memories, their scores)."""
    trace = deps.traces.get(request_id)
    if trace is None or not trace.recalled_by(principal.id) or not principal.can_reach(trace.workspace_id):
        raise NotFound("Recall trace not found")
    return trace


def report_usage(request_id: str, report: Ob1UsageReport, principal: Principal, deps: ReviewDeps) -> Ob1UsageAnswer:
    """Mark a recall's memories used / ignored (only memories that recall returned count)."""
    _own_trace(request_id, principal, deps)
    used = [n for n in map(ascii_int, report.used_memory_ids) if n is not None]
    ignored = {n: i.reason for i in report.ignored if (n := ascii_int(i.memory_id)) is not None}
    updated = deps.traces.record_usage(request_id, used, ignored, deps.memory.clock())
    if updated is None:
        raise NotFound("Recall trace not found")
    return Ob1UsageAnswer(ok=True, recorded=sum(1 for item in updated.items if item.used is not None))


def get_trace(request_id: str, principal: Principal, deps: ReviewDeps) -> dict[str, Any]:
    """What a recall scored, returned and how it was used; the memories as they are now (null once forgotten)."""
    trace = _own_trace(request_id, principal, deps)
    request = dict(trace.request)
    items = []
    current = deps.memory.store.get_many(trace.workspace_id, [i.memory_id for i in trace.items], principal.id)
    for item in sorted(trace.items, key=lambda i: (i.rank is None, i.rank or 0, -i.ranking_score)):
        memory = current.get(item.memory_id)
        items.append({"memory_id": str(item.memory_id), "rank": item.rank, "returned": item.rank is not None,
                      "similarity": item.similarity, "ranking_score": item.ranking_score,
                      "feedback": item.feedback, "use_policy_snapshot": dict(item.use_policy), "used": item.used,
                      "ignored_reason": item.ignored_reason, "memory": inspect_memory(memory) if memory else None})
    return {"trace": {"request_id": trace.request_id, "workspace_id": trace.workspace_id,
                      "project_id": request.get("project_id"), "runtime_name": (request.get("runtime") or {})
                      .get("name"), "task_id": request.get("task_id"), "query": request.get("query"),
                      "schema_version": request.get("schema_version"), "request_payload": request,
                      "response_policy": dict(trace.policy), "created_at": iso(trace.created_at),
                      "usage_reported_at": iso(trace.usage_reported_at), "candidate_count": len(trace.items)},
            "items": items}


MAX_LIST, QUEUE_SIZE = 200, 100


def list_ob1(filters: Ob1ListFilter, principal: Principal, store: MemoryStore,
             pending_only: bool = False) -> Ob1MemoryList:
    """`{memories, count}`, newest first; `pending_only`: the review queue (pending agent-written memories)."""
    if not principal.can_reach(filters.workspace_id):
        raise NotFound("Workspace not found")
    labels = {k: v for k, v in (("review_status", filters.review_status), ("runtime_name", filters.runtime_name),
                                ("lifecycle_status", filters.lifecycle_status)) if v is not None}
    if pending_only:
        labels = {"review_status": "pending"}
    prefix = ("task_id", filters.task_id_prefix) if filters.task_id_prefix and not pending_only else None
    query = MemoryListQuery(filters.workspace_id, project_id=filters.project_id,
                            type=None if pending_only else filters.memory_type, labels=labels, label_prefix=prefix,
                            limit=QUEUE_SIZE if pending_only else min(max(filters.limit, 1), MAX_LIST),
                            viewer=principal.id)
    memories = [response_memory(d) for d in store.list_memories(query).items]
    return Ob1MemoryList(memories=memories, count=len(memories))
