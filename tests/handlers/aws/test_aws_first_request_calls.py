"""The AWS calls of a fresh process's first search, recall and snapshot (bench/coldstart/run.py --first-response
measures their cost): each item a request needs is read once, never once more per leg or per caller.

Every API call the adapters make goes through botocore's `_make_api_call`; recording there (moto still answers)
counts DynamoDB reads by operation, table and key, in the order they are made.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import botocore.client
import pytest

from agentkb.composition import get_ports, reset_ports
from testkit.aws_backend import AwsBackend
from tests.helpers import body_of
from tests.reliability.corpus import EVENTS, load, replay, seed

Call = tuple[str, str, str]  # (operation, table, key or partition)


@pytest.fixture
def calls(aws_backend: AwsBackend, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Call]]:
    made: list[Call] = []
    original = botocore.client.BaseClient._make_api_call

    def recording(client: Any, operation: str, params: dict[str, Any]) -> Any:
        if "Key" in params:
            where = "|".join(v.get("S", "") for v in params["Key"].values())
        else:
            where = str(params.get("ExpressionAttributeValues", {}).get(":pk", {}).get("S", ""))
        made.append((operation, str(params.get("TableName", "")), where))
        return original(client, operation, params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", recording)
    yield made


def _first_request(case: str, calls: list[Call]) -> tuple[dict[str, Any], list[Call]]:
    """Seed the recorded corpus, drop every port (a fresh process), then answer the recorded event."""
    values = seed(get_ports(), snapshot=False, ws1_kb=True)
    reset_ports()
    calls.clear()
    response = replay(load(EVENTS / f"{case}.json", values))
    return response, list(calls)


def _catalog_reads(made: list[Call], sk_prefix: str) -> Counter[str]:
    return Counter(where for op, table, where in made
                   if op == "GetItem" and table.endswith("catalog") and where.split("|")[-1].startswith(sk_prefix))


def test_a_first_search_reads_its_knowledge_base_once(calls: list[Call]) -> None:
    # Given a fresh process, when it answers a hybrid search (lexical and vector legs in parallel)
    response, made = _first_request("search/hybrid_ok", calls)
    assert response["statusCode"] == 200, body_of(response)
    # Then the KB is read by the service only: the legs find its index from the profile that read remembered
    reads = _catalog_reads(made, "KB#")
    assert reads and set(reads.values()) == {1}, reads


def test_a_first_snapshot_reads_its_knowledge_base_once(calls: list[Call]) -> None:
    response, made = _first_request("snapshot/create_ok", calls)
    assert response["statusCode"] == 201, body_of(response)
    # The search inside the snapshot reads the KB; neither its legs nor the snapshot's sources read it again
    reads = _catalog_reads(made, "KB#")
    assert reads and set(reads.values()) == {1}, reads


def test_a_first_recall_reads_each_entity_link_partition_once(calls: list[Call]) -> None:
    response, made = _first_request("recall/recall_ok", calls)
    assert response["statusCode"] == 200, body_of(response)
    # The request's entities are lifted and reached again by the graph leg: their links are read once for both
    links = Counter(where for op, _table, where in made if op == "Query" and where.startswith("ME#"))
    request_entities = json.loads(load(EVENTS / "recall/recall_ok.json", {})["body"])["entities"]
    assert request_entities and links and set(links.values()) == {1}, links


def test_a_snapshot_without_a_memory_source_builds_no_memory_port(calls: list[Call]) -> None:
    # Given the recorded snapshot, whose sources are knowledge only
    response, made = _first_request("snapshot/create_ok", calls)
    assert response["statusCode"] == 201, body_of(response)
    # Then the memory store (and the recall routes and models behind it) was never built, nor its table read
    assert "memories" not in vars(get_ports())
    assert not [c for c in made if c[1].endswith("memory")], made
