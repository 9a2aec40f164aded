"""Direct invocations spend the per-minute rate limit on the AWS engine too (the DynamoDB rate-limit table)."""

from __future__ import annotations

import pytest

from agentkb.composition import reset_ports
from agentkb.config import reset_settings
from testkit.aws_backend import AwsBackend
from tests.helpers import invoke


def test_direct_invocations_are_rate_limited_per_principal(aws_backend: AwsBackend, monkeypatch: pytest.MonkeyPatch,
                                                           one_rate_window: float) -> None:
    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "2")
    reset_settings()
    reset_ports()
    svc = {"id": "svc", "workspaces": ["ws1"], "scopes": ["api:read"]}
    event = {"operation": "searchGraph", "principal": svc, "body": {"workspaceId": "ws1", "query": "billing-api"}}
    results = [invoke("search", event) for _ in range(3)]
    assert [r["statusCode"] for r in results] == [200, 200, 429], results[-1]["body"]
    assert results[2]["body"]["error"]["code"] == "RATE_LIMITED" and int(results[2]["headers"]["Retry-After"]) >= 1
    other = invoke("search", {**event, "principal": {**svc, "id": "other"}})
    assert other["statusCode"] == 200 and other["headers"]["X-RateLimit-Remaining"] == "1"
