"""The `agent_surface` record of a recall response, by upstream's rules (agent-surface.schema.json).

Upstream: the record is present only when the request's limits actually reshaped the answer; absent, the
envelope is the unshaped contract. `dropped` appears only with `output_truncated`, `aliases_removed` only when
non-empty (recall never removes the `direct_matches` / `graph_matches` aliases, so it never appears).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentkb.models.recall.api import AgentSurface


@dataclass(frozen=True, slots=True)
class Shaping:
    """What the two limits did: counts before and after `max_items`, then after `max_tokens`."""

    candidates: int  # distinct memories the retrieval legs found (each leg looks one past max_items)
    max_items: int
    capped: int  # items left after the max_items cut
    returned: int  # items left after the token budget
    content_truncated: bool  # the budget shortened an item's text

    @property
    def cut_by_max_items(self) -> bool:
        return self.candidates > self.capped

    @property
    def dropped(self) -> int:
        return self.capped - self.returned

    @property
    def truncated(self) -> bool:
        """Anything was cut: top-level `truncated`."""
        return self.cut_by_max_items or self.dropped > 0 or self.content_truncated


def agent_surface(shaping: Shaping) -> AgentSurface | None:
    """The AgentSurfaceMeta record (only the members it names are set), or None when the limits removed nothing."""
    if not shaping.truncated:
        return None
    record: dict[str, Any] = {"input_count": shaping.candidates, "output_count": shaping.returned}
    if shaping.cut_by_max_items:
        record["max_items"] = shaping.max_items
    if shaping.content_truncated:
        record["content_truncated"] = True
    if shaping.dropped > 0:  # items removed to fit max_tokens, upstream's output ceiling
        record["output_truncated"] = True
        record["dropped"] = shaping.dropped
    return AgentSurface(**record)
