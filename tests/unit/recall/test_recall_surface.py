"""`agent_surface` by upstream's rules (agent-surface.schema.json): present only when a limit cut something.

The pure record (services/recall_surface.py); tests/handlers/recall/test_recall_agent_surface.py and
tests/handlers/aws/test_aws_recall_surface.py take it through the recall handler on both engines.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentkb.services.recall.surface import Shaping, agent_surface
from tests.upstream import upstream_errors


@pytest.mark.parametrize(("shaping", "expected"), [
    (Shaping(3, 3, 3, 3, False), None),
    (Shaping(0, 5, 0, 0, False), None),
    (Shaping(4, 3, 3, 3, False), {"input_count": 4, "output_count": 3, "max_items": 3}),
    (Shaping(3, 5, 3, 1, False), {"input_count": 3, "output_count": 1, "output_truncated": True, "dropped": 2}),
    (Shaping(1, 5, 1, 1, True), {"input_count": 1, "output_count": 1, "content_truncated": True}),
    (Shaping(9, 4, 4, 2, False), {"input_count": 9, "output_count": 2, "max_items": 4, "output_truncated": True,
                                  "dropped": 2}),
])
def test_the_record_names_only_what_was_cut(shaping: Shaping, expected: dict[str, Any] | None) -> None:
    record = agent_surface(shaping)
    assert (None if record is None else record.model_dump(exclude_unset=True)) == expected
    assert shaping.truncated is (expected is not None)


def test_the_old_always_present_record_fails_upstream() -> None:
    """The helper can fail: the record recall used to send (aliases_removed: [] and dropped without a cut)."""
    old = {"query": "q", "k": 3, "direct_matches": [], "graph_matches": [], "results": [], "elapsed_ms": 1,
           "truncated": False, "agent_surface": {"input_count": 0, "output_count": 0, "dropped": 0,
                                                 "content_truncated": False, "output_truncated": False,
                                                 "aliases_removed": []}}
    assert any("aliases_removed" in e for e in upstream_errors("recall-response.schema.json", old))
