"""Usage feedback: bounded, decaying, signed by use, one event per (recall, memory)."""

from __future__ import annotations

import math

import pytest

from agentkb.models.recall.trace import RecallTrace, TraceItem, UsageEvent, apply_usage
from agentkb.services.recall.usage_feedback import DAY_S, FEEDBACK_CAP, HALF_LIFE_DAYS, feedback_boosts

NOW = 1_800_000_000.0


def test_feedback_is_bounded_however_many_uses() -> None:
    boosts = feedback_boosts([UsageEvent(1, True, NOW)] * 1000 + [UsageEvent(2, False, NOW)] * 1000, NOW)
    assert 0.99 * FEEDBACK_CAP < boosts[1] <= FEEDBACK_CAP
    assert -FEEDBACK_CAP <= boosts[2] < -0.99 * FEEDBACK_CAP


def test_feedback_decays_by_half_life() -> None:
    fresh = feedback_boosts([UsageEvent(1, True, NOW)], NOW)[1]
    old = feedback_boosts([UsageEvent(1, True, NOW - HALF_LIFE_DAYS * DAY_S)], NOW)[1]
    assert old == pytest.approx(FEEDBACK_CAP * math.tanh(0.5 / 3))
    assert 0 < old < fresh


def test_ignores_weigh_against_uses_and_unused_memories_get_nothing() -> None:
    boosts = feedback_boosts([UsageEvent(1, True, NOW), UsageEvent(1, False, NOW), UsageEvent(1, False, NOW)], NOW)
    assert boosts == {}  # +1 - 0.5 - 0.5 = 0: no boost either way
    assert feedback_boosts([], NOW) == {}


def test_a_report_marks_only_returned_items_and_used_wins() -> None:
    items = (TraceItem(1, 1, 0.9, 1.0, 0.0), TraceItem(2, None, 0.5, 0.6, 0.0))
    trace = RecallTrace("r", "ws", "p", NOW, {}, {}, items)
    updated, events = apply_usage(trace, used=[1, 2, 3], ignored={1: "dup"}, at=NOW)
    assert [(i.memory_id, i.used) for i in updated.items] == [(1, True), (2, None)]
    assert events == [UsageEvent(1, True, NOW)] and updated.usage_reported_at == NOW
