"""Recorded recall and memory events replayed through the real lambda handlers (the real local model)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.local.lambda_context import LocalLambdaContext
from tests.conftest import mint
from tests.helpers import validator

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
CASES = sorted(f"{p.parent.name}/{p.name.removesuffix('.expected.json')}"
               for d in ("recall", "memories") for p in (EVENTS / d).glob("*.expected.json"))


def replay(case: str, key: str) -> tuple[int, Any, dict[str, Any]]:
    event = json.loads((EVENTS / f"{case}.json").read_text())  # a fresh copy per call
    event["headers"]["X-API-Key"] = key
    event["multiValueHeaders"]["X-API-Key"] = [key]
    function = "ingest" if case.startswith("memories/") else "recall"
    result = importlib.import_module(f"{function}.handler").lambda_handler(event, LocalLambdaContext())
    headers = {k.lower(): v[-1] for k, v in (result.get("multiValueHeaders") or {}).items()}
    return result["statusCode"], json.loads(result["body"]), headers


@pytest.fixture()
def demo_key(bundle: Ports) -> str:
    return mint(bundle, ["demo"], ["api:read", "api:write"], "recall-replay")


@pytest.mark.parametrize("case", CASES)
def test_recorded_events(case: str, demo_key: str) -> None:
    if case.startswith("recall/"):  # recall against a workspace that holds the recorded memory
        assert replay("memories/write_ok", demo_key)[0] == 201
    expected = json.loads((EVENTS / f"{case}.expected.json").read_text())
    status, body, headers = replay(case, demo_key)
    assert status == expected["status"], body
    assert "x-ratelimit-limit" in headers
    if expected["schema"]:
        assert not [e.message for e in validator(expected["schema"]).iter_errors(body)]
    if status >= 400:
        assert set(body) == {"error"} and body["error"]["code"]
        assert "AKIA" not in json.dumps(body)


def test_the_recorded_memory_is_recalled_with_its_graph(demo_key: str) -> None:
    first = replay("memories/write_ok", demo_key)
    again = replay("memories/write_ok", demo_key)  # same idempotency key: the same memory, nothing new
    assert first[0] == 201 and again[0] == 200 and again[1]["memory_id"] == first[1]["memory_id"]
    status, body, _ = replay("recall/recall_ok", demo_key)
    assert status == 200 and body["results"][0]["name"] == "billing-deploys"
    assert body["backend_invoked"] == "local" and body["results"][0]["source"] == "direct"
