"""`agentkb memory repair` on the AWS engine (moto): old-layout personal name claims are converted table-wide and
abandoned staged write-backs of the named workspaces are swept; a second run finds nothing to do. The embedded
engine answers that its names were migrated when its database opened."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agentkb.adapters.aws.dynamodb.memory.staging as staging
from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.adapters.aws.dynamodb.tables import key, n
from agentkb.cli.main import main
from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.models.memory.detail import name_key
from testkit.moto_aws import AwsEnv
from tests.memory_records import WS, record


class _Crash(BaseException):
    pass


def _truth() -> DynamoDbMemoryStore:
    store: Any = get_ports().memories
    return store.truth if hasattr(store, "truth") else store


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_repair_converts_old_name_claims_and_sweeps_abandoned_stages(
        aws_settings: AwsEnv, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("AGENTKB_OPENSEARCH_ENDPOINT", raising=False)  # the memory store alone (no index to repair)
    reset_settings()
    reset_ports()
    store = _truth()
    client, table = store.db.client, store.table
    # Given an old-layout personal claim (written before per-owner names) ...
    bob = store.insert(record("mine", body="bob's", visibility="personal", owner_id="bob"))
    client.delete_item(TableName=table, Key=key(f"MW#{WS}", name_key("personal", "bob", "mine")))
    client.put_item(TableName=table, Item={**key(f"MW#{WS}", "N#mine"), "memory_id": n(bob.memory_id),
                                           "revision": n(1)})
    # ... and a write-back abandoned by a writer that died between its stage transactions
    real, calls = staging.DynamoDbMemoryStaging.write, []

    def dies(self: Any, *args: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise _Crash
        return real(self, *args)

    monkeypatch.setattr(staging.DynamoDbMemoryStaging, "write", dies)
    with pytest.raises(_Crash):
        store.insert_batch([record(f"wb-{i:02d}", body=f"finding {i}") for i in range(staging.CHUNK + 3)])
    monkeypatch.setattr(staging.DynamoDbMemoryStaging, "write", real)
    monkeypatch.setattr(staging, "STAGE_LEASE_S", 0.0)
    # When the operator runs the repair
    assert main(["memory", "repair", "--workspace", WS]) == 0
    stages, names = _lines(capsys)
    # Then the claim moved to bob's namespace and the stage is gone
    assert names["names"] == {"converted": True, "moved": 1, "scanned": 1, "left": []}
    assert (stages["workspace_id"], stages["stages_swept"], stages["stages_live"]) == (WS, 1, 0)
    sks = {i["sk"]["S"] for i in client.scan(TableName=table)["Items"]}
    assert name_key("personal", "bob", "mine") in sks and "N#mine" not in sks
    assert not [sk for sk in sks if sk.startswith("WB#") or sk.startswith("N#wb-")]
    # And a second run has nothing left to do
    assert main(["memory", "repair", "--workspace", WS]) == 0
    stages, names = _lines(capsys)
    assert names["names"]["moved"] == 0 and names["names"]["converted"] and stages["stages_swept"] == 0


def test_repair_on_the_embedded_engine_reports_names_migrated_on_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AGENTKB_BACKEND", "embedded")
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(tmp_path))
    reset_settings()
    reset_ports()
    assert main(["memory", "repair"]) == 0
    [line] = _lines(capsys)
    assert line["engine"] == "embedded" and line["names"]["converted"] is True
