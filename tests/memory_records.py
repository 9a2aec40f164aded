"""The memory records and recall scopes the memory suites share (the engine tests of both stores, the contract
suites, the staging and repair tests): one workspace, a fixed clock, unit vectors, and an eligibility matrix."""

from __future__ import annotations

import math
from typing import Any

from agentkb.models.memory.api import VISIBILITY_RANK, MemoryRecord
from agentkb.models.recall.api import RecallScope

WS = "ws1"
NOW = 1_750_000_000.0


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def record(name: str, body: str = "deploy notes", **fields: Any) -> MemoryRecord:
    base: dict[str, Any] = {
        "workspace_id": WS, "project_id": None, "visibility": "workspace", "owner_id": "alice", "channel_id": None,
        "type": "note", "name": name, "description": f"about {name}", "body": body, "confirmed": True,
        "stale": False, "valid_until": None, "sensitivity": 0, "source": None, "request_hash": f"h-{name}",
        "created_at": "2025-06-01T00:00:00Z", "updated_at": NOW - 100, "embedding": unit(1, 0, 0, 0),
        "entity_ids": ()}
    return MemoryRecord(**{**base, **fields})


def scope(**fields: Any) -> RecallScope:
    base: dict[str, Any] = {"workspace_id": WS, "audience_rank": VISIBILITY_RANK["personal"], "principal_id": "alice",
                            "project_id": None, "channel_id": None, "project_only": False,
                            "include_unconfirmed": False, "include_stale": False, "now": NOW, "since": None,
                            "allowed_sensitivity": 0}
    return RecallScope(**{**base, **fields})


MATRIX = [
    record("ws-open", embedding=unit(1, 0.1, 0, 0), entity_ids=("e1", "e2")),
    record("proj-a", project_id="pa", visibility="project", embedding=unit(1, 0.2, 0, 0), entity_ids=("e1",)),
    record("proj-b", project_id="pb", visibility="project", embedding=unit(1, 0.3, 0, 0), entity_ids=("e1",)),
    record("chan-x", channel_id="cx", visibility="channel", embedding=unit(0.9, 0.5, 0, 0)),
    record("mine", visibility="personal", owner_id="alice", embedding=unit(0.5, 1, 0, 0), entity_ids=("e2",)),
    record("theirs", visibility="personal", owner_id="bob", embedding=unit(0.4, 1, 0, 0), entity_ids=("e2",)),
    record("org", visibility="organization", body="billing service deploy", embedding=unit(0, 1, 0, 0)),
    record("unconfirmed", confirmed=False, embedding=unit(0, 0, 1, 0), entity_ids=("e1",)),
    record("stale", stale=True, embedding=unit(0, 0, 1, 0.1)),
    record("expired", valid_until=NOW - 1, embedding=unit(0, 0, 0.1, 1)),
    record("valid", valid_until=NOW + 1000, updated_at=NOW - 10, embedding=unit(0, 0, 1, 1), entity_ids=("e1",)),
    record("code", sensitivity=1, embedding=unit(1, 1, 1, 0), body="billing code snippet"),
    record("customer", sensitivity=2, embedding=unit(1, 1, 0, 1)),
    record("old", updated_at=NOW - 100_000, embedding=unit(1, 0, 1, 0), body="billing runbook old"),
    record("proj-a-ws", project_id="pa", embedding=unit(0.7, 0.7, 0.1, 0)),
]

SCOPES = [
    scope(),
    scope(audience_rank=VISIBILITY_RANK["project"], project_id="pa"),
    scope(project_id="pa", project_only=True),
    scope(project_only=True),
    scope(channel_id="cx", principal_id="bob"),
    scope(include_unconfirmed=True, include_stale=True),
    scope(allowed_sensitivity=1, since=NOW - 1000),
    scope(allowed_sensitivity=7, audience_rank=VISIBILITY_RANK["organization"]),
    scope(workspace_id="other"),
]
