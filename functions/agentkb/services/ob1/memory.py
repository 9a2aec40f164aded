"""A stored memory as OB1 sees it: review and lifecycle state, use policy, the policy part of ranking, the shapes.

Memories written through `/ob1/writeback` keep their OB1 state in the memory's `extra`; memories written through
`POST /v1/memories` get one derived from their facets (confirmed -> confirmed, else pending; stale / superseded ->
that lifecycle), so both surfaces recall and inspect the same store. The eligibility facets always follow the
state: `confirmed` = not pending-with-confirmation-required, `stale` = a lifecycle other than active.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentkb.models.memory.detail import MemoryDetail
from agentkb.models.ob1.responses import (
    Ob1ArtifactRef,
    Ob1Freshness,
    Ob1Memory,
    Ob1ProvenanceOut,
    Ob1ScopeOut,
    Ob1Source,
    Ob1UsePolicy,
)

ORIGIN = "ob1"
INACTIVE = frozenset({"stale", "superseded", "rejected", "disputed"})  # recalled only with include_stale
# Ranking = similarity + these (own weights; cosine units). Trust what a person confirmed, doubt what is pending.
PROVENANCE_WEIGHT = {"user_confirmed": 0.25, "imported": 0.18, "observed": 0.12, "inferred": 0.06, "generated": 0.04}
REVIEW_WEIGHT = {"confirmed": 0.12, "evidence_only": 0.04, "restricted": 0.0, "pending": -0.06}
INACTIVE_WEIGHT = -0.2  # rejected, stale, disputed or superseded (only seen with include_stale)
INSTRUCTION_WEIGHT, EVIDENCE_WEIGHT, NEITHER_WEIGHT = 0.15, 0.05, -0.15
CONFIDENCE_WEIGHT = 0.1
SUMMARY_CHARS = 140


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def summarise(text: str) -> str:
    return " ".join(text.split())[:SUMMARY_CHARS]


@dataclass(frozen=True, slots=True)
class Ob1State:
    review_status: str
    lifecycle_status: str
    provenance_status: str
    confidence: float
    created_by: str
    can_use_as_instruction: bool
    can_use_as_evidence: bool
    requires_user_confirmation: bool
    last_confirmed_at: str | None
    stale_after: str | None


def stored_state(x: Mapping[str, Any]) -> Ob1State:
    """The OB1 state kept in a memory's `extra`."""
    return Ob1State(str(x["review_status"]), str(x["lifecycle_status"]), str(x["provenance_status"]),
                    float(x["confidence"]), str(x["created_by"]), bool(x["can_use_as_instruction"]),
                    bool(x["can_use_as_evidence"]), bool(x["requires_user_confirmation"]),
                    x.get("last_confirmed_at"), x.get("stale_after"))


def state_of(d: MemoryDetail) -> Ob1State:
    """The OB1 state of any stored memory (derived for memories written through /v1)."""
    if d.extra.get("origin") == ORIGIN:
        return stored_state(d.extra)
    lifecycle = "superseded" if d.superseded else "stale" if d.stale else "active"
    return Ob1State("confirmed" if d.confirmed else "pending", lifecycle, "imported", 1.0 if d.confirmed else 0.5,
                    "import", d.confirmed and lifecycle == "active", True, not d.confirmed,
                    d.created_at if d.confirmed else None, iso(d.valid_until))


def facets_of(state: Ob1State) -> tuple[bool, bool]:
    """(confirmed, stale) eligibility facets of a state."""
    pending = state.review_status == "pending" and state.requires_user_confirmation
    return not pending, state.lifecycle_status in INACTIVE


def policy_score(state: Ob1State) -> float:
    """What provenance, review status, use policy and confidence add to similarity in /ob1/recall ranking."""
    review = INACTIVE_WEIGHT if state.lifecycle_status in INACTIVE else REVIEW_WEIGHT.get(state.review_status, 0.0)
    use = (INSTRUCTION_WEIGHT if state.can_use_as_instruction else EVIDENCE_WEIGHT if state.can_use_as_evidence
           else NEITHER_WEIGHT)
    return PROVENANCE_WEIGHT.get(state.provenance_status, 0.0) + review + use + CONFIDENCE_WEIGHT * state.confidence


def use_policy(state: Ob1State) -> dict[str, bool]:
    return {"can_use_as_instruction": state.can_use_as_instruction,
            "can_use_as_evidence": state.can_use_as_evidence,
            "requires_user_confirmation": state.requires_user_confirmation}


def response_memory(d: MemoryDetail) -> Ob1Memory:
    """One memory of a recall or write-back answer, exactly the members OB1's clients read (every one set)."""
    state, x = state_of(d), d.extra
    refs = x.get("source_refs") or []
    runtime = x.get("runtime") or {}
    return Ob1Memory(
        memory_id=str(d.memory_id), summary=d.description or summarise(d.body), content=d.body,
        source=Ob1Source(kind="agent_memory" if x.get("origin") == ORIGIN else "memory",
                         uri=refs[0].get("uri") if refs else d.source, title=d.description or d.name,
                         timestamp=d.occurred_at or d.created_at),
        provenance=Ob1ProvenanceOut(status=state.provenance_status, confidence=state.confidence,
                                    created_by=state.created_by, model=x.get("model"), runtime=runtime.get("name")),
        scope=Ob1ScopeOut(workspace_id=d.workspace_id, project_id=d.project_id, channel_id=d.channel_id,
                          visibility=d.visibility),
        use_policy=Ob1UsePolicy(**use_policy(state)),
        freshness=Ob1Freshness(created_at=d.created_at, last_confirmed_at=state.last_confirmed_at,
                               stale_after=state.stale_after),
        related_artifacts=[Ob1ArtifactRef(kind=a["kind"], uri=a["uri"]) for a in x.get("artifacts") or []])


def inspect_memory(d: MemoryDetail) -> dict[str, Any]:
    """Everything about one memory (inspection and review answers): state, source, provenance, artifacts, history."""
    state, x = state_of(d), d.extra
    runtime = x.get("runtime") or {}
    return {
        "id": str(d.memory_id), "memory_id": str(d.memory_id), "workspace_id": d.workspace_id,
        "project_id": d.project_id, "channel_id": d.channel_id, "visibility": d.visibility, "memory_type": d.type,
        "name": d.name, "summary": d.description or summarise(d.body), "content": d.body,
        "lifecycle_status": state.lifecycle_status, "review_status": state.review_status,
        "provenance_status": state.provenance_status, "confidence": state.confidence, "created_by": state.created_by,
        "runtime_name": runtime.get("name"), "runtime_version": runtime.get("version"),
        "provider": x.get("provider"), "model": x.get("model"), "task_id": x.get("task_id"),
        "flow_id": x.get("flow_id"), **use_policy(state), "last_confirmed_at": state.last_confirmed_at,
        "stale_after": state.stale_after, "created_at": d.created_at, "revision": d.revision,
        "entity_ids": list(d.entity_ids), "source": d.source,
        "source_refs": x.get("source_refs") or [], "artifacts": x.get("artifacts") or [],
        "review_history": x.get("review_history") or [], "relations": x.get("relations") or [],
        "metadata": {k: x[k] for k in ("models_used", "retention", "schema_version", "step_id", "channel",
                                       "content_hash") if k in x},
    }
