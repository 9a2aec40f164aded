"""The Lambda handlers themselves (behind API Gateway and behind `agentkb serve`): a known path with another method
is a 405 with Allow in every event shape, and a body nested past the limit is a 400 that says so, never a
"malformed JSON" from the parser's recursion or a crashed direct invocation."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.local.lambda_context import LocalLambdaContext
from tests.helpers import body_of, http_event, response_headers, rest_event
from tests.reliability.make_events import RECALL


def _handler(function: str) -> Any:
    return importlib.import_module(f"{function}.handler").lambda_handler


@pytest.mark.parametrize("shape", [rest_event, http_event])
@pytest.mark.parametrize(("function", "method", "path", "allow"), [
    ("recall", "PUT", "/v1/recall", "POST"), ("search", "OPTIONS", "/health", "GET"),
    ("ingest", "PATCH", "/v1/memories/12", "DELETE, GET"), ("ingest", "DELETE", "/ob1/memories/7/review", "PATCH"),
])
def test_a_known_path_with_another_method_is_405(bundle: Ports, shape: Any, function: str, method: str, path: str,
                                                 allow: str) -> None:
    response = _handler(function)(shape(method, path), LocalLambdaContext())
    assert response["statusCode"] == 405 and response_headers(response)["allow"] == allow
    assert body_of(response)["error"]["code"] == "METHOD_NOT_ALLOWED"


def test_an_unknown_path_stays_404(bundle: Ports) -> None:
    response = _handler("search")(rest_event("PUT", "/v1/unknown"), LocalLambdaContext())
    assert response["statusCode"] == 404 and body_of(response)["error"]["code"] == "NOT_FOUND"


def _nested(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize("levels", [65, 1_500, 50_000])
def test_a_body_nested_too_deep_says_so(rw_key: str, levels: int) -> None:
    raw = '{"workspace_id": "ws1", "x": ' + '{"a":' * levels + "1" + "}" * levels + "}"
    response = _handler("recall")(rest_event("POST", "/v1/recall", key=rw_key, raw_body=raw), LocalLambdaContext())
    error = body_of(response)["error"]
    assert response["statusCode"] == 400 and "nested too deeply" in error["message"], error


def test_a_direct_invocation_nested_too_deep_says_so(bundle: Ports) -> None:
    event = {"operation": "recall", "body": {**RECALL, "workspace_id": "ws1", "x": _nested(1_500)}}
    response = _handler("recall")(event, LocalLambdaContext())
    assert response["statusCode"] == 400 and "nested too deeply" in response["body"]["error"]["message"]
