"""`agent_surface` on the AWS memory stores (DynamoDB + the fake OpenSearch): the cases of
tests/unit/recall/test_recall_surface.py through the real recall handler with AGENTKB_BACKEND=aws."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from testkit.aws_backend import AwsBackend
from tests.handlers.recall.recall_helpers import BASE_RECALL, memory_body
from tests.helpers import body_of, invoke, rest_event
from tests.upstream import assert_upstream


@pytest.fixture()
def key(aws_backend: AwsBackend) -> str:
    return aws_backend.key(["ws1"], ["api:read", "api:write"], "surface")


def write(key: str, name: str, text: str, **fields: Any) -> None:
    response = invoke("ingest", rest_event("POST", "/v1/memories", memory_body(name, text, **fields), key=key))
    assert response["statusCode"] == 201, body_of(response)


def recall(key: str, query: str, **limits: int) -> dict[str, Any]:
    body = copy.deepcopy(BASE_RECALL)
    body.update(query=query, limits={**body["limits"], **limits})
    response = invoke("recall", rest_event("POST", "/v1/recall", body, key=key))
    out: dict[str, Any] = body_of(response)
    assert response["statusCode"] == 200, out
    assert_upstream("recall-response.schema.json", out)
    return out


def test_nothing_cut_means_no_record(key: str) -> None:
    for i in range(3):
        write(key, f"m{i}", f"log retention {i}")
    out = recall(key, "log retention", max_items=3)
    assert len(out["results"]) == 3 and out["truncated"] is False and "agent_surface" not in out


def test_a_max_items_cut_is_reported(key: str) -> None:
    for i in range(6):
        write(key, f"m{i}", f"log retention {i}")
    out = recall(key, "log retention", max_items=3)
    surface = out["agent_surface"]
    assert out["truncated"] is True and len(out["results"]) == 3 and out["backend_invoked"] == "bedrock"
    assert set(surface) == {"input_count", "output_count", "max_items"}
    assert surface["input_count"] > surface["output_count"] == 3 and surface["max_items"] == 3


def test_a_token_cut_reports_dropped_with_output_truncated(key: str) -> None:
    for i in range(4):
        write(key, f"m{i}", f"alerting thresholds {i} " + "detail " * 40, description="alerting " * 10)
    out = recall(key, "alerting thresholds", max_items=10, max_tokens=150)
    surface = out["agent_surface"]
    assert out["truncated"] is True and "max_items" not in surface and surface["output_truncated"] is True
    assert surface == {"input_count": 4, "output_count": len(out["results"]), "output_truncated": True,
                       "dropped": 4 - len(out["results"])}
