"""`agentkb keys list|revoke` against the real handler: a revoked key answers 401 at once (moved from
tests/unit/data_ingest/test_manage_cli.py: it drives the ingest function)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.cli import main
from tests.helpers import body_of, invoke, rest_event


@pytest.fixture()
def run(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def call(*argv: str) -> tuple[int, Any]:
        code = main([*argv, "--data-dir", str(data_dir)])
        out = capsys.readouterr().out
        return code, json.loads(out) if "--json" in argv and code == 0 else out

    return call


def test_keys_list_and_revoke(run: Any, container: Any) -> None:
    code, created = run("keys", "create", "--workspace", "ws1", "--scope", "api:read", "--json")
    key = created["key"]
    listed = run("keys", "list", "--json")[1]
    assert [k["keyId"] for k in listed] == [created["keyId"]] and not listed[0]["revoked"]
    assert "key_hash" not in json.dumps(listed) and key not in json.dumps(listed)
    event = rest_event("GET", "/api/v2/knowledge/bases", key=key, query={"workspaceId": "ws1"})
    assert invoke("ingest", event)["statusCode"] == 200
    assert run("keys", "revoke", created["keyId"], "--json") == (0, {"revoked": created["keyId"]})
    response = invoke("ingest", rest_event("GET", "/api/v2/knowledge/bases", key=key, query={"workspaceId": "ws1"}))
    assert response["statusCode"] == 401 and body_of(response)["error"]["code"] == "UNAUTHORIZED"
    assert run("keys", "revoke", "nope")[0] == 2
