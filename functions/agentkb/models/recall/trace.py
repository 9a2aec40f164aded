"""Recall traces (what an OB1 recall considered, returned and how it was used) and the usage events they feed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any


@dataclass(frozen=True, slots=True)
class TraceItem:
    """One scored candidate of a recall. Only ids and scores: a forgotten memory leaves nothing else behind."""

    memory_id: int
    rank: int | None  # 1-based position in the answer; None when scored but not returned
    similarity: float
    ranking_score: float
    feedback: float
    use_policy: Mapping[str, bool] = field(default_factory=dict)
    used: bool | None = None
    ignored_reason: str | None = None


@dataclass(frozen=True, slots=True)
class RecallTrace:
    request_id: str
    workspace_id: str
    principal_id: str | None  # who recalled: the trace and its usage are theirs alone (None: stored without it)
    created_at: float
    request: Mapping[str, Any]  # the validated request, as received
    policy: Mapping[str, Any]  # the eligibility and limits the recall applied
    items: tuple[TraceItem, ...]
    usage_reported_at: float | None = None

    def recalled_by(self, principal_id: str) -> bool:
        """Whether this principal made the recall; a trace that names no principal is nobody's."""
        return self.principal_id is not None and self.principal_id == principal_id


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """A memory reported used (or ignored) for one recall; a later report for the same recall replaces it."""

    memory_id: int
    used: bool
    at: float


def encode_trace(trace: RecallTrace) -> str:
    return json.dumps(asdict(trace), separators=(",", ":"))


def decode_trace(text: str) -> RecallTrace:
    raw: dict[str, Any] = json.loads(text)
    items = tuple(TraceItem(**item) for item in raw.pop("items"))
    raw.setdefault("principal_id", None)  # a trace without it reads as nobody's (no one can read or report on it)
    return RecallTrace(**raw, items=items)


def apply_usage(trace: RecallTrace, used: Sequence[int], ignored: Mapping[int, str | None],
                at: float) -> tuple[RecallTrace, list[UsageEvent]]:
    """The trace with its returned items marked, and the usage events (only for memories the recall returned)."""
    returned = {item.memory_id for item in trace.items if item.rank is not None}
    marks: dict[int, tuple[bool, str | None]] = {m: (False, r) for m, r in ignored.items() if m in returned}
    marks.update({m: (True, None) for m in used if m in returned})  # used wins over ignored in one report
    items = tuple(replace(item, used=marks[item.memory_id][0], ignored_reason=marks[item.memory_id][1])
                  if item.memory_id in marks else item for item in trace.items)
    events = [UsageEvent(memory_id, was_used, at) for memory_id, (was_used, _reason) in marks.items()]
    return replace(trace, items=items, usage_reported_at=at), events
