"""Usage feedback: what agents reported using (or ignoring) moves a memory's rank in later recalls.

Each usage event weighs +1 (used) or -0.5 (ignored) and halves every HALF_LIFE_DAYS; a memory's sum goes through
tanh, so the boost never leaves [-FEEDBACK_CAP, +FEEDBACK_CAP] however many reports arrive (one event per recall
and memory: repeating a report replaces it). The boost is a ranking input only, added to similarity after the
store's eligibility predicate: it reorders eligible memories and can never bring back an ineligible one. Events
older than WINDOW_DAYS (weight < 1/64) are not read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from agentkb.models.recall.trace import UsageEvent
from agentkb.ports.memory import RecallTraceStore

FEEDBACK_CAP = 0.1  # the most feedback adds to (or takes from) a cosine similarity: one entity lift
HALF_LIFE_DAYS = 14.0
WINDOW_DAYS = 6 * HALF_LIFE_DAYS
USED_WEIGHT, IGNORED_WEIGHT = 1.0, -0.5
SATURATION = 3.0  # three fresh uses reach ~76% of the cap
MAX_EVENTS = 5000  # newest events read per recall
DAY_S = 86_400.0


def feedback_boosts(events: Iterable[UsageEvent], now: float) -> dict[int, float]:
    """Per memory id, the bounded, decayed boost of its usage history (memories without events are absent)."""
    totals: dict[int, float] = {}
    for event in events:
        age_days = max(0.0, now - event.at) / DAY_S
        weight = (USED_WEIGHT if event.used else IGNORED_WEIGHT) * 0.5 ** (age_days / HALF_LIFE_DAYS)
        totals[event.memory_id] = totals.get(event.memory_id, 0.0) + weight
    return {memory_id: FEEDBACK_CAP * math.tanh(total / SATURATION)
            for memory_id, total in totals.items() if total}


def feedback_reader(traces: RecallTraceStore) -> Callable[[str, float], dict[int, float]]:
    """(workspace, now) -> boosts: what recall services take as their `feedback` dependency."""
    def read(workspace_id: str, now: float) -> dict[int, float]:
        events = traces.usage_events(workspace_id, now - WINDOW_DAYS * DAY_S, MAX_EVENTS)
        return feedback_boosts(events, now)
    return read
