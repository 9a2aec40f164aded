"""DynamoDB-only behaviour of the graph store (the shared behaviour is the contract suite, tests/contract)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agentkb.adapters.aws.dynamodb.graph.store import descending_weight
from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.models.graph.records import EntityRecord, GraphBatch, RelationRecord
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv
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


def test_the_graph_commands_act_on_the_aws_engine(aws_settings: AwsEnv, tmp_path: Any, capsys: Any) -> None:
    import json

    from agentkb.adapters.aws.dynamodb.graph.store import DynamoDbGraphStore
    from agentkb.cli.main import main

    # Given a graph imported with AGENTKB_BACKEND=aws: it lands in DynamoDB
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(DEMO))
    assert main(["graph", "import", str(path), "--workspace", WS]) == 0
    assert json.loads(capsys.readouterr().out)["entities"] == len(DEMO["entities"])
    store = DynamoDbGraphStore(lambda: aws_client("dynamodb", REGION), aws_settings.tables["graph"])
    assert store.workspaces() == [WS]
    # And a stub an earlier version's memory writer left there
    stub = EntityRecord("mem-repo:0123456789abcdef0123", "repo", "billing-api", None, "billing-api", "workspace", (),
                        "0" * 64, {"origin": "memory"})
    store.upsert(WS, GraphBatch(entities=(stub,)))
    # When the operator migrates, Then the stub is gone and the report says so; a second run finds nothing
    assert main(["graph", "migrate"]) == 0
    assert json.loads(capsys.readouterr().out) == {"migrated": {WS: {
        "entities": 0, "relations": 0, "proofs": 0, "removedMemoryStubs": 1}}}
    assert store.existing_entity_ids(WS, [stub.id]) == set()
    assert main(["graph", "migrate", "--workspace", WS]) == 0
    assert json.loads(capsys.readouterr().out) == {"migrated": {}}
