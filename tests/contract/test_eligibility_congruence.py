"""Recall eligibility is one compiled predicate; every engine's translation selects exactly what it selects.

Hypothesis generates memories (facets, NULLs included) and recall scopes. For each pair the reference semantics
(`evaluate`) decide, and these must agree with it row for row: the embedded SQL WHERE clause (run by SQLite) and
numpy mask, the DynamoDB FilterExpression (run by moto's Query) and item re-check, and the OpenSearch DSL (run by
the fake OpenSearch's evaluator, which fails on any clause it does not know).
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_engines import matches, memory_table

from agentkb.adapters.aws.dynamodb.memory.match import eligibility_filter, is_eligible
from agentkb.adapters.aws.dynamodb.tables import n, s
from agentkb.adapters.aws.opensearch.memory import eligibility_dsl
from agentkb.adapters.embedded.sqlite.eligibility import FACET_COLUMNS, Facets, eligibility_mask, eligibility_sql
from agentkb.models.eligibility import STRING_FACETS, compile_eligibility, evaluate
from agentkb.models.memory.api import VISIBILITY_RANK
from agentkb.models.recall.api import RecallScope

NOW = 1_800_000_000.0
WS = "ws"
_counter = itertools.count()

memories = st.fixed_dictionaries({
    "vis_rank": st.sampled_from(sorted(VISIBILITY_RANK.values())),
    "project_id": st.sampled_from([None, "p1", "p2"]), "channel_id": st.sampled_from([None, "c1", "c2"]),
    "owner_id": st.sampled_from([None, "ann", "bob"]), "sensitivity": st.integers(0, 7),
    "confirmed": st.integers(0, 1), "stale": st.integers(0, 1), "superseded": st.integers(0, 1),
    "valid_until": st.sampled_from([None, NOW - 10, NOW, NOW + 10]),
    "updated_at": st.sampled_from([NOW - 30 * 86_400, NOW - 86_400, NOW - 1, NOW]),
})
scopes = st.builds(
    RecallScope, workspace_id=st.just(WS), audience_rank=st.sampled_from(sorted(VISIBILITY_RANK.values())),
    principal_id=st.sampled_from(["ann", "zed"]), project_id=st.sampled_from([None, "p1", "p3"]),
    channel_id=st.sampled_from([None, "c1"]), project_only=st.booleans(), include_unconfirmed=st.booleans(),
    include_stale=st.booleans(), now=st.just(NOW), since=st.sampled_from([None, NOW - 7 * 86_400, NOW]),
    allowed_sensitivity=st.integers(0, 7))


@pytest.fixture(scope="module")
def dynamodb() -> Iterator[Any]:
    with memory_table() as client:
        yield client


def _sql_ids(rows: list[dict[str, Any]], scope: RecallScope) -> list[int]:
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE TABLE memories (id INTEGER PRIMARY KEY, workspace_id TEXT, {', '.join(FACET_COLUMNS)})")
    conn.executemany(f"INSERT INTO memories VALUES (?, ?, {', '.join('?' * len(FACET_COLUMNS))})",
                     [(i, WS, *(r[c] for c in FACET_COLUMNS)) for i, r in enumerate(rows)])
    where, params = eligibility_sql(scope)
    return sorted(r[0] for r in conn.execute(f"SELECT m.id FROM memories m WHERE {where}", params))


def _mask_ids(rows: list[dict[str, Any]], scope: RecallScope) -> list[int]:
    facets = Facets.build(1, [(i, *(r[c] for c in FACET_COLUMNS)) for i, r in enumerate(rows)])
    return sorted(int(i) for i in facets.ids[eligibility_mask(facets, scope)])


def _item(memory_id: int, pk: str, row: dict[str, Any]) -> dict[str, Any]:
    item = {"pk": s(pk), "sk": s(f"V#{memory_id:012d}"), "memory_id": n(memory_id)}
    for name, value in row.items():
        if value is not None:
            item[name] = s(value) if name in STRING_FACETS else n(value)
    return item


def _dynamodb_ids(client: Any, rows: list[dict[str, Any]], scope: RecallScope) -> tuple[list[int], list[int]]:
    """(ids moto's Query returns under the FilterExpression, ids the item re-check accepts)."""
    pk = f"MW#{next(_counter)}"
    items = [_item(i, pk, r) for i, r in enumerate(rows)]
    for item in items:
        client.put_item(TableName="memory", Item=item)
    where, values = eligibility_filter(scope)
    found = client.query(TableName="memory", KeyConditionExpression="pk = :pk", FilterExpression=where,
                         ExpressionAttributeValues={":pk": s(pk), **values})["Items"]
    return (sorted(int(i["memory_id"]["N"]) for i in found),
            sorted(i for i, item in enumerate(items) if is_eligible(item, scope)))


def _dsl_ids(rows: list[dict[str, Any]], scope: RecallScope) -> list[int]:
    query = {"bool": {"filter": eligibility_dsl(scope)}}
    return sorted(i for i, r in enumerate(rows)
                  if matches({"workspace_id": WS, **{k: v for k, v in r.items() if v is not None}}, query))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(memories, min_size=1, max_size=12), scope=scopes)
def test_every_translation_selects_what_the_predicate_selects(dynamodb: Any, rows: list[dict[str, Any]],
                                                              scope: RecallScope) -> None:
    predicate = compile_eligibility(scope)
    expected = [i for i, r in enumerate(rows) if evaluate(predicate, r)]
    assert _sql_ids(rows, scope) == expected
    assert _mask_ids(rows, scope) == expected
    queried, rechecked = _dynamodb_ids(dynamodb, rows, scope)
    assert queried == expected
    assert rechecked == expected
    assert _dsl_ids(rows, scope) == expected


def test_the_predicate_keeps_the_documented_rules() -> None:
    # Given one memory per rule that the default scope (workspace audience, nothing included) must drop
    base = {"vis_rank": 3, "project_id": None, "channel_id": None, "owner_id": "bob", "sensitivity": 0,
            "confirmed": 1, "stale": 0, "superseded": 0, "valid_until": None, "updated_at": NOW}
    scope = RecallScope(WS, 3, "ann", None, None, False, False, False, NOW, None, 0)
    predicate = compile_eligibility(scope)
    assert evaluate(predicate, base)
    for change in ({"confirmed": 0}, {"stale": 1}, {"superseded": 1}, {"valid_until": NOW}, {"sensitivity": 1},
                   {"vis_rank": 0, "owner_id": "ann"}, {"vis_rank": 2, "project_id": "p1"}):
        assert not evaluate(predicate, {**base, **change}), change
