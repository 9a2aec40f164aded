"""Every CLI command acts on the configured engine: with AGENTKB_BACKEND=aws, `agentkb graph import` and `keys
create` write to DynamoDB (moto) and never to a local SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkb.adapters.aws.dynamodb.graph.store import DynamoDbGraphStore
from agentkb.cli.main import main
from agentkb.composition import get_ports
from agentkb.local.demo import DEMO_DIR
from agentkb.services.access.api_keys import authenticate
from testkit.moto_aws import AwsEnv


def test_graph_import_writes_to_dynamodb(aws_settings: AwsEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    # Given the AWS engine and a data directory the embedded engine would have used
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(tmp_path / "data"))
    # When the demo graph is imported through the CLI
    assert main(["graph", "import", str(DEMO_DIR / "graph.json"), "--workspace", "ws1"]) == 0
    counts = json.loads(capsys.readouterr().out)
    # Then it landed in the graph table, and no SQLite file was created
    store = get_ports().graph
    assert isinstance(store, DynamoDbGraphStore)
    assert counts["entities"] > 0 and counts["graphSourceHash"] == store.source_hash("ws1")
    assert len(store.entities("ws1", [e["id"] for e in json.loads((DEMO_DIR / "graph.json").read_text())["entities"]]
                              )) == counts["entities"]
    assert not (tmp_path / "data").exists()


def test_keys_create_writes_to_dynamodb(aws_settings: AwsEnv, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(tmp_path / "data"))
    assert main(["keys", "create", "--workspace", "ws1", "--scope", "api:read", "--json"]) == 0
    created = json.loads(capsys.readouterr().out)
    ports = get_ports()
    assert authenticate(ports.keys, ports.secrets, created["key"]).workspaces == ("ws1",)
    item = aws_settings.client("dynamodb").scan(TableName=aws_settings.tables["keys"])["Items"]
    assert [i for i in item if created["keyId"] in json.dumps(i)]
    assert not (tmp_path / "data").exists()
