"""DynamoDB-only behaviour of the graph store (the shared behaviour is the contract suite, tests/contract)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from aws_env import REGION, AwsEnv

from agentkb.adapters.aws.dynamodb_graph import descending_weight
from agentkb.adapters.aws.dynamodb_tables import aws_client
from agentkb.models.graph import GraphBatch, RelationRecord
from tests.contract.graph_engines import Both
from tests.contract.graph_engines import both as both  # the two-engine fixture
from tests.graph_payloads import DEMO, WS


def test_descending_weight_orders_floats_heaviest_first() -> None:
    weights = [1.0, 0.9, 0.6, 0.5000001, 0.5, 0.3, 0.0, -0.0, -0.5]
    assert sorted(weights, key=descending_weight) == sorted(weights, reverse=True)
    assert descending_weight(0.0) == descending_weight(-0.0)


def test_source_hash_is_cached_per_version(both: Both, aws: AwsEnv) -> None:
    first = both.write(copy.deepcopy(DEMO))["graphSourceHash"]
    table, ddb = aws.tables["graph"], aws.client("dynamodb")
    ddb.update_item(TableName=table, Key={"pk": {"S": "G#demo"}, "sk": {"S": "#META"}},
                    UpdateExpression="SET #h = :h", ExpressionAttributeNames={"#h": "hash"},
                    ExpressionAttributeValues={":h": {"S": "f" * 64}})
    assert both.ddb.source_hash(WS) == "f" * 64  # served from the cache
    ddb.update_item(TableName=table, Key={"pk": {"S": "G#demo"}, "sk": {"S": "#META"}},
                    UpdateExpression="ADD version :one", ExpressionAttributeValues={":one": {"N": "1"}})
    assert both.ddb.source_hash(WS) == first  # recomputed for the new version


def test_a_read_only_role_still_answers_the_source_hash(both: Both, monkeypatch: pytest.MonkeyPatch) -> None:
    from botocore.exceptions import ClientError

    first = both.write(copy.deepcopy(DEMO))["graphSourceHash"]
    both.upsert(GraphBatch(relations=(RelationRecord("w1", "svc:billing-api", "api:billing-v1", "calls",
                                                       proof_ids=("proof:billing-openapi",)),)))
    client = aws_client("dynamodb", REGION)

    def denied(**_kwargs: Any) -> Any:
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "UpdateItem")

    monkeypatch.setattr(client, "update_item", denied)
    assert both.ddb.source_hash(WS) == both.sqlite.source_hash(WS) != first
