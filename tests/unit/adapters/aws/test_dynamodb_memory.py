"""DynamoDbMemoryStore on moto next to SqliteMemoryStore: the same writes, the same eligible answers."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore
from agentkb.errors import Conflict
from agentkb.models.memory.api import IdempotencyRecord
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv
from tests.memory_records import MATRIX, SCOPES, WS, record, scope, unit


@pytest.fixture()
def stores(aws: AwsEnv, tmp_path: Path) -> tuple[SqliteMemoryStore, DynamoDbMemoryStore]:
    return (SqliteMemoryStore(Database(tmp_path / "memory.sqlite3")),
            DynamoDbMemoryStore(lambda: aws_client("dynamodb", REGION), aws.tables["memory"]))


def close(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> bool:
    return [i for i, _ in a] == [i for i, _ in b] and all(
        abs(x - y) < 1e-5 for (_, x), (_, y) in zip(a, b, strict=True))


@pytest.mark.parametrize("bulk", [False, True])
def test_eligibility_matrix_matches_the_embedded_store(stores: Any, bulk: bool) -> None:
    for store in stores:
        if bulk:
            assert store.insert_many(MATRIX) == list(range(1, len(MATRIX) + 1))
        else:
            assert [store.insert(r).memory_id for r in MATRIX] == list(range(1, len(MATRIX) + 1))
    sqlite, ddb = stores
    query = unit(1, 0.25, 0.1, 0)
    for sc in SCOPES:
        expected = sqlite.vector_search(sc, query, 50)
        assert close(ddb.vector_search(sc, query, 50), expected), sc
        assert close(ddb.vector_search(sc, query, 3, {5: 0.5, 11: 0.5}),
                     sqlite.vector_search(sc, query, 3, {5: 0.5, 11: 0.5})), sc
        assert ddb.linked_memories(sc, ["e1", "e2", "e9"], 2) == sqlite.linked_memories(sc, ["e1", "e2", "e9"], 2)
        for text in ("billing", "deploy billing", "the", "zzz"):  # whole words: the same memories match
            assert ({i for i, _ in ddb.lexical_search(sc, text, 50)}
                    == {i for i, _ in sqlite.lexical_search(sc, text, 50)}), (sc, text)
    ids = list(range(1, len(MATRIX) + 3))
    assert ddb.views(WS, ids) == sqlite.views(WS, ids)
    assert ddb.entity_links(WS, ids) == sqlite.entity_links(WS, ids)
    assert ddb.views("other", ids) == {} and ddb.entity_links("other", ids) == {}
    sims_a, sims_b = ddb.similarities(WS, ids, query), sqlite.similarities(WS, ids, query)
    assert sims_a.keys() == sims_b.keys() and all(abs(sims_a[i] - sims_b[i]) < 1e-5 for i in sims_a)
    assert ddb.vector_dimension(WS) == sqlite.vector_dimension(WS) == 4
    assert ddb.vector_dimension("other") is sqlite.vector_dimension("other") is None


def test_lexical_ranks_name_matches_first_and_returns_positive_scores(stores: Any) -> None:
    _sqlite, ddb = stores
    ddb.insert_many([record("billing", body="unrelated text"), record("notes", body="billing billing mention"),
                     record("other", body="nothing to see")])
    hits = ddb.lexical_search(scope(), "billing", 10)
    assert [i for i, _ in hits] == [1, 2] and all(score > 0 for _, score in hits)
    assert ddb.lexical_search(scope(), "billing", 1) == hits[:1]
    assert ddb.lexical_search(scope(), "   ", 10) == []


def test_superseding_and_idempotency_match_the_embedded_store(stores: Any) -> None:
    for store in stores:
        first = store.insert(record("runbook"), IdempotencyRecord("alice", "k1", "b1"))
        second = store.insert(record("runbook", body="v2", request_hash="h2", embedding=unit(0, 1, 0, 0)),
                              IdempotencyRecord("alice", "k2", "b2"))
        with pytest.raises(Conflict):
            store.insert(record("other"), IdempotencyRecord("alice", "k1", "b9"))
        assert (first.memory_id, second.memory_id, second.revision) == (1, 2, 2)
    sqlite, ddb = stores
    assert ddb.find_live(WS, "N#runbook") == sqlite.find_live(WS, "N#runbook")
    assert ddb.find_live(WS, "N#runbook").response["supersedes"] == 1  # type: ignore[union-attr]
    assert ddb.find_live(WS, "N#missing") is None is sqlite.find_live(WS, "N#missing")
    for principal, k in itertools.product(("alice", "bob"), ("k1", "k2", "k3")):
        assert ddb.find_idempotent(WS, principal, k) == sqlite.find_idempotent(WS, principal, k)
    for sc in (scope(), scope(include_stale=True)):  # the superseded revision is stale for recall
        assert close(ddb.vector_search(sc, unit(1, 0, 0, 0), 10), sqlite.vector_search(sc, unit(1, 0, 0, 0), 10))


def test_a_lost_race_for_a_live_name_is_a_conflict(stores: Any) -> None:
    _sqlite, ddb = stores
    ddb.insert(record("runbook"))
    racer = DynamoDbMemoryStore(lambda: ddb.db.client, ddb.table)
    pointer = ddb.db.get_item(f"MW#{WS}", "N#runbook")
    ddb.insert(replace(record("runbook"), body="v2"))  # wins after the racer read the name
    real_get = racer.db.get_item
    racer.db.get_item = lambda pk, sk: pointer if sk == "N#runbook" else real_get(pk, sk)  # type: ignore[method-assign]
    with pytest.raises(Conflict):
        racer.insert(replace(record("runbook"), body="v2b"))
    assert ddb.find_live(WS, "N#runbook").revision == 2  # type: ignore[union-attr]


def test_stopwords_match_the_embedded_fts_query() -> None:
    from agentkb.adapters.aws.dynamodb.memory import match as dynamodb_memory_match
    from agentkb.adapters.embedded import index as sqlite_index

    # one rule (models/query_text.py): the same words, stopwords and cap, also for a query of stopwords only
    for text in ("How do the deploy and the runbook agree? " + " ".join(f"w{i}" for i in range(80)), "the and of"):
        assert sqlite_index.fts_query(text) == " OR ".join(f'"{t}"' for t in dynamodb_memory_match.query_terms(text))


def test_the_aws_bundle_serves_the_dynamodb_memory_and_graph_stores(aws_settings: AwsEnv) -> None:
    from agentkb.adapters.aws.dynamodb.graph.store import DynamoDbGraphStore
    from agentkb.composition import get_ports

    bundle = get_ports()
    assert isinstance(bundle.memories.truth, DynamoDbMemoryStore)  # OpenSearch legs over the DynamoDB truth
    assert bundle.memories.truth.table == aws_settings.tables["memory"]
    assert isinstance(bundle.graph, DynamoDbGraphStore)
    assert bundle.graph.table == aws_settings.tables["graph"]
