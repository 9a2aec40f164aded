"""tests/unit runs no handler: a test that drives a function app (through a handler, the local gateway or a
resolver) belongs in tests/handlers. This guard fails any unit test that tries."""

from __future__ import annotations

from typing import Any

import pytest
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

from agentkb.api.app import FunctionApp


def _refuse(*_: Any, **__: Any) -> Any:
    raise AssertionError("tests/unit runs no handler: move this test to tests/handlers")


@pytest.fixture(autouse=True)
def no_handlers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(FunctionApp, "__call__", _refuse)
    monkeypatch.setattr(ApiGatewayResolver, "resolve", _refuse)
