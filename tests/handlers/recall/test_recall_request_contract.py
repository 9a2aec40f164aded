"""The request contract, exactly: our 400s agree with JSON Schema on the shared recall-request.v1 document."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.handlers.recall.recall_helpers import BASE_RECALL, REQUEST_VALIDATOR, RESPONSE_VALIDATOR, call


def variant(path: str, value: Any) -> dict[str, Any]:
    body = copy.deepcopy(BASE_RECALL)
    *parents, leaf = path.split(".")
    node = body
    for p in parents:
        node = node.setdefault(p, {})
    if value is DELETE:
        node.pop(leaf, None)
    else:
        node[leaf] = value
    return body


DELETE = object()
CASES = [
    ("schema_version", "openbrain.openclaw.recall.v2"), ("schema_version", DELETE), ("workspace_id", ""),
    ("workspace_id", 7), ("project_id", None), ("project_id", 3), ("task_id", "t-1"), ("flow_id", None),
    ("task_type", "chitchat"), ("task_type", "incident_response"), ("query", ""), ("query", "   "),
    ("query", DELETE), ("extra", 1), ("channel", None), ("channel", {}), ("channel.kind", None),
    ("channel.kind", "slack"), ("channel.id", None), ("channel.thread_id", "t"), ("channel.team", "x"),
    ("runtime", {"name": "openclaw", "version": None}), ("runtime", {"name": "other"}), ("runtime", {"name": None}),
    ("model_intent", {"provider": None, "model": "m"}), ("model_intent", {"vendor": "x"}),
    ("entities", DELETE), ("entities", {}), ("entities.people", ["ann"]), ("entities.people", None),
    ("entities.people", [1]), ("entities.places", ["x"]), ("scope.visibility", "team"),
    ("scope.project_only", "false"), ("scope.include_stale", DELETE), ("scope.extra", True),
    ("limits.max_items", 0), ("limits.max_items", 50), ("limits.max_items", 51), ("limits.max_items", 3.0),
    ("limits.max_items", 3.5), ("limits.max_items", True), ("limits.max_items", "3"),
    ("limits.max_tokens", 99), ("limits.max_tokens", 100), ("limits.max_tokens", 20000),
    ("limits.max_tokens", 20001), ("limits.max_tokens", DELETE), ("limits.recency_days", None),
    ("limits.recency_days", 0), ("limits.recency_days", 1), ("limits.recency_days", 1e3),
    ("limits.extra", 1), ("sensitivity.contains_code", DELETE), ("sensitivity.contains_code", 1),
    ("sensitivity.contains_secrets", False), ("sensitivity", None),
]


@pytest.mark.parametrize(("path", "value"), CASES,
                         ids=[f"{p}=<deleted>" if v is DELETE else f"{p}={v!r}"[:60] for p, v in CASES])
def test_validation_agrees_with_the_contract(rw_key: str, fake_embedder: Any, path: str, value: Any) -> None:
    body = variant(path, value)
    valid = REQUEST_VALIDATOR.is_valid(body)
    status, out, _ = call("recall", "/v1/recall", body, rw_key)
    assert status == (200 if valid else 400), out
    if valid:
        assert RESPONSE_VALIDATOR.is_valid(out)
    else:
        assert out["error"]["code"] == "BAD_REQUEST" and out["error"]["details"]
