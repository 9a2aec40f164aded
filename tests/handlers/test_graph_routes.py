"""The graph routes through the real lambda handlers: recorded events, auth, scopes, contract, direct invoke."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentkb.composition import Ports
from tests.conftest import mint
from tests.graph_payloads import assert_upstream_search
from tests.unit.graph.conftest import ROOT

EVENTS = ROOT / "events" / "graph"
CONTEXT = SimpleNamespace(function_name="fn", memory_limit_in_mb=512, aws_request_id="req-1",
                          invoked_function_arn="arn:aws:lambda:us-east-1:000000000000:function:fn")


def handler(name: str) -> Any:
    import importlib

    return importlib.import_module(f"{name}.handler").lambda_handler


def replay(case: str, key: str) -> tuple[int, Any]:
    event = json.loads((EVENTS / f"{case}.json").read_text())  # a fresh copy per call
    event["headers"]["X-API-Key"] = key
    event["multiValueHeaders"]["X-API-Key"] = [key]
    function = "ingest" if case.startswith("write") else "search"
    result = handler(function)(event, CONTEXT)
    return result["statusCode"], json.loads(result["body"])


@pytest.fixture()
def demo_key(bundle: Ports) -> str:
    return mint(bundle, ["demo"], ["api:read", "api:write"], "graph-tester")


@pytest.mark.parametrize("case", sorted(p.name.removesuffix(".expected.json") for p in EVENTS.glob("*.expected.json")))
def test_recorded_events(case: str, demo_key: str) -> None:
    replay("write_ok", demo_key)
    expected = json.loads((EVENTS / f"{case}.expected.json").read_text())
    status, body = replay(case, demo_key)
    assert status == expected["status"], body
    if expected["schema"] == "workspace-knowledge-search.v1.schema.json":
        assert_upstream_search(body)
    if status >= 400:
        assert set(body) == {"error"} and body["error"]["code"] == "BAD_REQUEST"


def test_search_is_byte_identical_through_the_handler(demo_key: str) -> None:
    replay("write_ok", demo_key)
    event = json.loads((EVENTS / "search_agent.json").read_text())
    event["headers"]["X-API-Key"] = demo_key
    bodies = {handler("search")(json.loads(json.dumps(event)), CONTEXT)["body"] for _ in range(3)}
    assert len(bodies) == 1


def test_unreachable_workspace_is_404_and_read_key_cannot_write(bundle: Ports) -> None:
    other = mint(bundle, ["elsewhere"], ["api:read", "api:write"], "mallory")
    assert replay("search_full", other)[0] == 404
    reader = mint(bundle, ["demo"], ["api:read"], "reader")
    assert replay("write_ok", reader)[0] == 403


def test_direct_invocation_by_operation_id(demo_key: str, data_dir: Path) -> None:
    replay("write_ok", demo_key)
    principal = {"id": "svc", "workspaces": ["demo"], "scopes": ["api:read"]}
    result = handler("search")({"operation": "searchGraph", "principal": principal,
                                "body": {"workspaceId": "demo", "query": "billing-api"}}, CONTEXT)
    assert result["statusCode"] == 200
    body = result["body"] if isinstance(result["body"], dict) else json.loads(result["body"])
    assert body["entities"][0]["id"] == "svc:billing-api"
