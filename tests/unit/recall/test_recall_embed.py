"""The bounded query embedding: a hung backend keeps its slot; once every slot is stuck, fail fast."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from agentkb.errors import EmbeddingUnavailable
from agentkb.services.recall import embed as recall_embed
from agentkb.services.recall.embed import embed_query_bounded
from tests.unit.recall.fake_embedders import FailingEmbedder, HashEmbedder


def _free_slots() -> int:
    return int(recall_embed._slots._value)  # type: ignore[attr-defined]


def _wait_until(condition: Callable[[], bool]) -> None:
    for _ in range(200):
        if condition():
            return
        time.sleep(0.025)
    pytest.fail("the condition did not hold within 5 s")


def _all_slots_free() -> None:
    """Wait for hung calls of earlier tests in this process (released at their end) to hand their slots back."""
    for _ in range(100):
        if _free_slots() == recall_embed.EMBED_SLOTS:
            return
        time.sleep(0.05)
    pytest.fail("an earlier test left an embedding slot busy")


def test_every_slot_busy_is_slot_exhausted() -> None:
    _all_slots_free()
    release = threading.Event()
    hanging = FailingEmbedder(hang=release)
    try:
        # A timed-out call either runs on (and keeps its slot while it hangs) or, on a loaded machine, was
        # cancelled before a worker took it (and gave its slot back): hang calls until every slot is held.
        for _ in range(20 * recall_embed.EMBED_SLOTS):
            if hanging.entered == recall_embed.EMBED_SLOTS:
                break
            started = hanging.entered
            with pytest.raises(EmbeddingUnavailable) as timeout:
                embed_query_bounded(hanging, "q", 0.01)
            assert timeout.value.code == "timeout" and timeout.value.retryable
            _wait_until(lambda n=started: hanging.entered > n or _free_slots() == recall_embed.EMBED_SLOTS - n)
        assert hanging.entered == recall_embed.EMBED_SLOTS
        with pytest.raises(EmbeddingUnavailable) as busy:
            embed_query_bounded(HashEmbedder(), "q", 1.0)
        assert busy.value.code == "slot_exhausted"
    finally:
        release.set()
    for _ in range(100):  # the slots come back once the hung calls return
        try:
            assert embed_query_bounded(HashEmbedder(), "q", 1.0)
            break
        except EmbeddingUnavailable:
            time.sleep(0.05)
    else:
        pytest.fail("slots were not released")
