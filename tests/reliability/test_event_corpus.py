"""Every recorded event (events/**/*.json, every function folder, all three shapes) through the real handlers.

Each case gets a fresh data dir seeded with what any event expects (tests/reliability/corpus.py), moto for AWS.
A response must have the recorded status, match its recorded schema AND what /openapi.json declares for that
route and status, use the one error envelope, and never echo a key. 413 and 429 are generated for every route.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from moto import mock_aws

from agentkb.api.routes_table import ROUTES, RouteSpec
from agentkb.composition import Ports, get_ports, reset_ports
from agentkb.config import reset_settings
from tests.helpers import body_of, http_event, mint, response_headers, rest_event
from tests.reliability.corpus import (
    EVENTS,
    WORKSPACES,
    load,
    openapi_response_errors,
    replay,
    route_of,
    schema_validator,
    seed,
)

CASES = sorted(p.relative_to(EVENTS).as_posix().removesuffix(".json") for p in EVENTS.glob("*/*.json")
               if not p.name.endswith(".expected.json"))


@pytest.fixture(autouse=True)
def aws() -> Any:
    with mock_aws():
        yield


def test_every_event_has_an_expectation_and_every_route_all_shapes() -> None:
    missing = [c for c in CASES if not (EVENTS / f"{c}.expected.json").exists()]
    assert not missing
    shapes: dict[str, set[str]] = {r.operation_id: set() for r in ROUTES}
    for case in CASES:
        event = json.loads((EVENTS / f"{case}.json").read_text())
        route = route_of(event)
        if route is not None:
            shape = "direct" if "operation" in event else "v2" if event.get("version") == "2.0" else "rest"
            shapes[route.operation_id].add(shape)
    assert {op: s for op, s in shapes.items() if s != {"rest", "v2", "direct"}} == {}


@pytest.mark.parametrize("case", CASES)
def test_recorded_event(case: str, bundle: Ports) -> None:
    folder, name = case.split("/")
    values = seed(bundle, snapshot="snapshot" in name and folder == "reliability", ws1_kb=folder == "snapshot")
    event = load(EVENTS / f"{case}.json", values)
    expected = json.loads((EVENTS / f"{case}.expected.json").read_text())
    response = replay(event)
    body = body_of(response)
    assert response["statusCode"] == expected["status"], body
    check_response(event, response, body)
    if expected.get("schema"):
        errors = [e.message for e in schema_validator(expected["schema"]).iter_errors(body)]
        assert not errors, errors[:3]
    if "body" in expected:
        assert body == expected["body"]
    assert all(value not in json.dumps(body) for key, value in values.items() if key.startswith("akb_"))


def check_response(event: dict[str, Any], response: dict[str, Any], body: Any) -> None:
    status, headers = response["statusCode"], response_headers(response)
    route = route_of(event)
    if status >= 400:
        assert not list(schema_validator("error.schema.json").iter_errors(body)), body
        assert set(body) == {"error"}
    if status in (429, 503):
        assert int(headers["retry-after"]) >= 1
    if route is not None:
        assert not openapi_response_errors(route, status, body)
        if route.scope and 200 <= status < 300 and "operation" not in event:
            assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= set(headers)
    if status != 204 and "operation" not in event:  # a direct result is {statusCode, headers?, body}
        assert headers.get("content-type", "").startswith("application/json")


def _concrete(route: RouteSpec) -> str:
    return route.path.replace("{knowledgeBaseId}", "kb-1").replace("{documentId}", "doc-1").replace(
        "{snapshotId}", "9b2e7c1a-0000-4000-8000-000000000000")


BIG = '{"workspaceId": "' + "x" * (2 * 1024 * 1024 + 1) + '"}'


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.operation_id)
@pytest.mark.parametrize("shape", ["rest", "v2", "direct"])
def test_413_for_every_route_and_shape(route: RouteSpec, shape: str, bundle: Ports) -> None:
    key = mint(bundle, WORKSPACES, ["api:read", "api:write"])
    if shape == "rest":
        event = rest_event(route.method, _concrete(route), None, key=key, raw_body=BIG, resource=route.path)
    elif shape == "v2":
        event = http_event(route.method, _concrete(route), None, key=key)
        event["body"] = BIG
    else:
        event = {"operation": route.operation_id, "body": {"workspaceId": "x" * (2 * 1024 * 1024 + 1)},
                 "pathParameters": {"knowledgeBaseId": "kb-1", "documentId": "doc-1",
                                    "snapshotId": "9b2e7c1a-0000-4000-8000-000000000000"}}
    response = replay(event)
    body = body_of(response)
    assert response["statusCode"] == 413, body
    assert body["error"]["code"] == "PAYLOAD_TOO_LARGE"
    if route.scope is not None and shape != "direct":  # a valid key's 413 is an authenticated response
        assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= set(response_headers(response))
        anonymous = copy.deepcopy(event)
        for headers in (anonymous.get("headers") or {}, anonymous.get("multiValueHeaders") or {}):
            for name in [n for n in headers if n.lower() == "x-api-key"]:
                del headers[name]
        assert replay(anonymous)["statusCode"] == 401  # no key: 401 first, whatever the size


@pytest.mark.parametrize("route", [r for r in ROUTES if r.scope], ids=lambda r: r.operation_id)
@pytest.mark.parametrize("shape", ["rest", "v2"])
def test_429_for_every_authenticated_route(route: RouteSpec, shape: str, data_dir: Any,
                                           monkeypatch: pytest.MonkeyPatch, one_rate_window: float) -> None:
    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "1")
    reset_settings()
    reset_ports()
    key = mint(get_ports(), WORKSPACES, ["api:read", "api:write"])
    make = rest_event if shape == "rest" else http_event
    body = {} if route.method == "POST" else None
    first = replay(make(route.method, _concrete(route), body, key=key))
    assert first["statusCode"] != 429
    second = replay(make(route.method, _concrete(route), body, key=key))
    headers = response_headers(second)
    assert second["statusCode"] == 429, body_of(second)
    assert body_of(second)["error"]["code"] == "RATE_LIMITED"
    assert int(headers["retry-after"]) >= 1 and headers["x-ratelimit-remaining"] == "0"
    check_response(make(route.method, _concrete(route), body, key=key), second, body_of(second))
