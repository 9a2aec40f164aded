"""The vector leg's numpy eligibility mask must select exactly what eligibility_sql selects."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.eligibility import eligibility_mask, eligibility_sql
from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore
from agentkb.models.memory.api import VISIBILITY_RANK
from agentkb.models.recall.api import RecallScope

NOW = 1_800_000_000.0


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SqliteMemoryStore:
    db = Database(Path(tmp_path_factory.mktemp("mask")) / "m.sqlite3")
    mem = SqliteMemoryStore(db)
    rng = random.Random(7)
    rows = []
    for i in range(1, 601):
        vis = rng.choice(list(VISIBILITY_RANK))
        rows.append((i, "ws", rng.choice([None, "p1", "p2"]), vis, VISIBILITY_RANK[vis],
                     rng.choice([None, "ann", "bob"]),
                     rng.choice([None, "c1", "c2"]), "note", f"m{i}", "", "", rng.randint(0, 1), rng.randint(0, 1),
                     rng.randint(0, 1), 1, rng.choice([None, NOW - 10, NOW + 10]), rng.randint(0, 7), "h", "t",
                     NOW - rng.randint(0, 40) * 86_400, "[]", 0))
    conn = db.connection()
    conn.executemany(
        "INSERT INTO memories (id, workspace_id, project_id, visibility, vis_rank, owner_id, channel_id, type, name,"
        " description, body, confirmed, stale, superseded, revision, valid_until, sensitivity, request_hash,"
        " created_at, updated_at, entity_ids, relation_count) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    conn.execute("INSERT INTO memory_meta (workspace_id, version) VALUES ('ws', 1)")
    return mem


SCOPES = list(itertools.product(list(VISIBILITY_RANK), [None, "p1", "p3"], [None, "c1"], ["ann", "zed"],
                                [False, True], [False, True], [False, True], [None, NOW - 7 * 86_400], [0, 5, 7]))


@pytest.mark.parametrize("combo", SCOPES[::7], ids=lambda c: "-".join(map(str, c)))
def test_mask_equals_sql(store: SqliteMemoryStore, combo: tuple) -> None:  # type: ignore[type-arg]
    vis, project, channel, me, project_only, unconfirmed, stale, since, allowed = combo
    scope = RecallScope(workspace_id="ws", audience_rank=VISIBILITY_RANK[vis], principal_id=me, project_id=project,
                        channel_id=channel, project_only=project_only, include_unconfirmed=unconfirmed,
                        include_stale=stale, now=NOW, since=since, allowed_sensitivity=allowed)
    conn = store.db.connection()
    where, params = eligibility_sql(scope)
    expected = sorted(r[0] for r in conn.execute(f"SELECT m.id FROM memories m WHERE {where}", params))
    facets = store._facets(conn, "ws")
    assert sorted(int(i) for i in facets.ids[eligibility_mask(facets, scope)]) == expected
