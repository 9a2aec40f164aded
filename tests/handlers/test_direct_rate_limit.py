"""Direct invocations spend the per-minute rate limit too: `direct:<principal id>`, never an API key's bucket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import Ports, reset_ports
from agentkb.config import reset_settings
from tests.helpers import body_of, invoke, mint, rest_event

BODY = {"workspaceId": "ws1", "query": "billing-api"}


def direct(principal: dict[str, Any] | None) -> dict[str, Any]:
    event: dict[str, Any] = {"operation": "searchGraph", "body": BODY}
    if principal is not None:
        event["principal"] = principal
    return invoke("search", event)


@pytest.fixture()
def limit_two(data_dir: Path, monkeypatch: pytest.MonkeyPatch, one_rate_window: float) -> None:
    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "2")
    reset_settings()
    reset_ports()


def test_a_direct_principal_is_rate_limited_on_its_own_bucket(limit_two: None) -> None:
    svc = {"id": "svc", "workspaces": ["ws1"], "scopes": ["api:read"]}
    # Given a limit of two per minute, when one principal invokes three times
    first, second, third = direct(svc), direct(svc), direct(svc)
    # Then the first two pass with the rate headers and the third is a 429 envelope with Retry-After
    assert first["statusCode"] == 200 and first["headers"]["X-RateLimit-Remaining"] == "1"
    assert second["statusCode"] == 200 and second["headers"]["X-RateLimit-Remaining"] == "0"
    assert third["statusCode"] == 429 and third["body"]["error"]["code"] == "RATE_LIMITED"
    assert int(third["headers"]["Retry-After"]) >= 1
    # Another principal, and an invocation naming none, each have their own budget
    other = direct({"id": "other", "workspaces": ["ws1"], "scopes": ["api:read"]})
    assert other["statusCode"] == 200
    assert direct(None)["statusCode"] == 200


def test_a_key_and_a_direct_principal_of_the_same_name_do_not_share_a_bucket(limit_two: None, bundle: Ports) -> None:
    key = mint(bundle, ["ws1"], ["api:read"], "svc")
    svc = {"id": "svc", "workspaces": ["ws1"], "scopes": ["api:read"]}
    assert [direct(svc)["statusCode"] for _ in range(3)] == [200, 200, 429]
    over_http = invoke("search", rest_event("POST", "/v1/graph/search", BODY, key=key))
    assert over_http["statusCode"] == 200, body_of(over_http)


def test_a_rate_limited_direct_call_changes_nothing(limit_two: None) -> None:
    svc = {"id": "writer", "workspaces": ["ws1"], "scopes": ["api:read", "api:write"]}
    memory = {"workspace_id": "ws1", "visibility": "workspace", "type": "note", "name": "n", "body": "remember this"}
    results = [invoke("ingest", {"operation": "writeMemory", "principal": svc,
                                 "body": {**memory, "name": f"n{i}"}}) for i in range(3)]
    assert [r["statusCode"] for r in results] == [201, 201, 429]
    reader = {"id": "reader", "workspaces": ["ws1"], "scopes": ["api:read"]}
    recall = invoke("recall", {"operation": "recall", "principal": reader, "body": {
        "schema_version": "openbrain.openclaw.recall.v1", "workspace_id": "ws1", "task_type": "general",
        "query": "remember", "entities": {}, "scope": {"visibility": "workspace", "project_only": False,
                                                       "include_unconfirmed": True, "include_stale": True},
        "limits": {"max_items": 10, "max_tokens": 1000},
        "sensitivity": {"contains_code": False, "contains_customer_data": False,
                        "contains_private_meeting_data": False}}})
    assert recall["statusCode"] == 200, recall["body"]
    assert sorted(m["name"] for m in recall["body"]["results"]) == ["n0", "n1"]
