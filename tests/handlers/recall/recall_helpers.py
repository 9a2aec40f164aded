"""Recall test helpers: handler calls, contract validators, memory builders, the fake-embedder fixture."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agentkb.local.lambda_context import LocalLambdaContext
from tests.helpers import body_of, response_headers, rest_event
from tests.unit.recall.fake_embedders import FailingEmbedder, HashEmbedder  # noqa: F401  (re-exported)
from tests.upstream import ours_and_upstream

ROOT = Path(__file__).resolve().parents[3]
REQUEST_SCHEMA = json.loads((ROOT / "schemas/recall-request.v1.schema.json").read_text())
RESPONSE_SCHEMA = json.loads((ROOT / "schemas/recall-response.schema.json").read_text())
REQUEST_VALIDATOR = Draft202012Validator(REQUEST_SCHEMA)
RESPONSE_VALIDATOR = ours_and_upstream("recall-response.schema.json")  # schemas/ and upstream
WS = "ws1"

BASE_RECALL: dict[str, Any] = {
    "schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "project_id": None,
    "task_type": "general", "query": "how do we deploy the billing service",
    "entities": {}, "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
                              "include_stale": False},
    "limits": {"max_items": 10, "max_tokens": 4000},
    "sensitivity": {"contains_code": False, "contains_customer_data": False, "contains_private_meeting_data": False},
}


def recall_body(**overrides: Any) -> dict[str, Any]:
    """A valid recall request; nested dicts in overrides are merged one level deep."""
    body = copy.deepcopy(BASE_RECALL)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict) and key != "entities":
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body


def memory_body(name: str, body: str, **fields: Any) -> dict[str, Any]:
    return {"workspace_id": WS, "visibility": "workspace", "type": "note", "name": name, "body": body, **fields}


def handler(function: str) -> Any:
    import importlib

    return importlib.import_module(f"{function}.handler").lambda_handler


def call(function: str, path: str, body: Any, key: str, query: dict[str, str] | None = None,
         ) -> tuple[int, Any, dict[str, str]]:
    response = handler(function)(rest_event("POST", path, body, key=key, query=query), LocalLambdaContext())
    return response["statusCode"], body_of(response), response_headers(response)


def write(key: str, name: str, body: str, expect: int = 201, **fields: Any) -> dict[str, Any]:
    status, out, _ = call("ingest", "/v1/memories", memory_body(name, body, **fields), key)
    assert status == expect, out
    return out


def recall(key: str, expect: int = 200, params: dict[str, str] | None = None, **overrides: Any) -> dict[str, Any]:
    """POST /v1/recall through the real handler; every 200 is validated against schemas/ and upstream."""
    body = recall_body(**overrides)
    assert not list(REQUEST_VALIDATOR.iter_errors(body)), "test bug: the request itself breaks the contract"
    status, out, _ = call("recall", "/v1/recall", body, key, params)
    assert status == expect, out
    if status == 200:
        errors = [e.message for e in RESPONSE_VALIDATOR.iter_errors(out)]
        assert not errors, errors[:3]
    return out


def names(response: dict[str, Any], part: str = "results") -> list[str]:
    return [item["name"] for item in response[part]]


@pytest.fixture()
def fake_embedder(override_ports: Any) -> HashEmbedder:
    """Swap the model for the hash embedder (unit tests stay fast and deterministic)."""
    embedder = HashEmbedder()
    override_ports(embedder=embedder)
    return embedder
