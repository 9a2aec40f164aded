"""Eligibility matrix: visibility x confirmed x stale x sensitivity x recency, applied inside the store's query."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore
from agentkb.models.memory.api import SENSITIVITY_BITS, VISIBILITY_RANK, MemoryRecord
from agentkb.models.recall.api import RecallScope
from tests.unit.recall.fake_embedders import HashEmbedder

NOW = 1_800_000_000.0
DAY = 86_400.0
ME, PROJECT, CHANNEL = "alice", "p1", "c1"
STATES = ("fresh", "stale", "superseded", "expired")


@dataclass(frozen=True)
class Spec:
    visibility: str
    audience_match: bool  # owner / channel / project equal the request's
    confirmed: bool
    state: str
    sensitivity: int
    age_days: float


SPECS = [Spec(*combo) for combo in itertools.product(
    VISIBILITY_RANK, (True, False), (True, False), STATES, (0, 1, 2, 4, 7), (1.0, 40.0))]


def _record(spec: Spec, i: int) -> MemoryRecord:
    match = spec.audience_match
    return MemoryRecord(
        workspace_id="ws", project_id=PROJECT if match else "p-other", visibility=spec.visibility,
        owner_id=ME if match else "bob", channel_id=CHANNEL if match else "c-other", type="note", name=f"m{i}",
        description="", body=f"memory {i}", confirmed=spec.confirmed, stale=spec.state == "stale",
        valid_until=NOW - DAY if spec.state == "expired" else NOW + DAY, sensitivity=spec.sensitivity,
        source=None, request_hash=str(i), created_at="2027-01-01T00:00:00Z", updated_at=NOW - spec.age_days * DAY,
        embedding=HashEmbedder().embed_query(f"memory {i}"))


@pytest.fixture(scope="module")
def matrix_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[SqliteMemoryStore, dict[int, Spec]]:
    store = SqliteMemoryStore(Database(Path(tmp_path_factory.mktemp("elig")) / "db.sqlite3"))
    ids = store.insert_many([_record(s, i) for i, s in enumerate(SPECS)])
    superseded = [mid for mid, s in zip(ids, SPECS, strict=True) if s.state == "superseded"]
    conn = store.db.connection()
    conn.execute(f"UPDATE memories SET superseded = 1 WHERE id IN ({','.join(map(str, superseded))})")
    conn.execute("UPDATE memory_meta SET version = version + 1")
    return store, dict(zip(ids, SPECS, strict=True))


def oracle(spec: Spec, scope: RecallScope) -> bool:
    """The eligibility rules, written out plainly."""
    rank = VISIBILITY_RANK[spec.visibility]
    if rank < scope.audience_rank:
        return False
    if spec.visibility in ("personal", "channel", "project") and not spec.audience_match:
        return False
    if scope.project_only and not spec.audience_match:
        return False
    if not scope.include_unconfirmed and not spec.confirmed:
        return False
    if not scope.include_stale and spec.state != "fresh":
        return False
    if scope.since is not None and NOW - spec.age_days * DAY < scope.since:
        return False
    return spec.sensitivity & ~scope.allowed_sensitivity == 0


SENS = {"none": 0, "code": SENSITIVITY_BITS["contains_code"], "all": 7}


@pytest.mark.parametrize(("audience", "unconfirmed", "stale", "recency", "sensitivity", "project_only"), [
    *itertools.product(VISIBILITY_RANK, (False, True), (False, True), (None, 7), ("none", "code", "all"), (False,)),
    *itertools.product(("workspace", "personal"), (True,), (True,), (None,), ("all",), (True,)),
])
def test_eligible_rows_match_the_rules(matrix_store: Any, audience: str, unconfirmed: bool, stale: bool,
                                       recency: int | None, sensitivity: str, project_only: bool) -> None:
    store, specs = matrix_store
    scope = RecallScope(workspace_id="ws", audience_rank=VISIBILITY_RANK[audience], principal_id=ME,
                        project_id=PROJECT, channel_id=CHANNEL, project_only=project_only,
                        include_unconfirmed=unconfirmed, include_stale=stale, now=NOW,
                        since=NOW - recency * DAY if recency else None, allowed_sensitivity=SENS[sensitivity])
    # When the vector leg ranks with k larger than the workspace, it returns exactly the eligible rows.
    got = {mid for mid, _ in store.vector_search(scope, HashEmbedder().embed_query("memory"), k=10_000)}
    expected = {mid for mid, spec in specs.items() if oracle(spec, scope)}
    assert got == expected
    lexical = {mid for mid, _ in store.lexical_search(scope, "memory", k=10_000)}
    assert lexical == expected  # the FTS fallback applies the same WHERE clause
    assert expected or audience == "personal" or not unconfirmed  # the matrix is never trivially empty


def test_a_workspace_audience_never_sees_narrower_memories(matrix_store: Any) -> None:
    store, specs = matrix_store
    scope = RecallScope("ws", VISIBILITY_RANK["workspace"], ME, PROJECT, CHANNEL, False, True, True, NOW, None, 7)
    got = [specs[mid].visibility for mid, _ in store.vector_search(scope, HashEmbedder().embed_query("m"), 10_000)]
    assert set(got) == {"workspace", "organization"}


def test_other_workspaces_are_invisible(matrix_store: Any) -> None:
    store, _ = matrix_store
    scope = RecallScope("elsewhere", 0, ME, PROJECT, CHANNEL, False, True, True, NOW, None, 7)
    assert store.vector_search(scope, HashEmbedder().embed_query("memory"), 100) == []
    assert store.lexical_search(scope, "memory", 100) == []
