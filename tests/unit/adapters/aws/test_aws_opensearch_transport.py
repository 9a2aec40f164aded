"""OpenSearch transport behaviour the contract recordings do not cover: retries, deadlines, bulk item retries."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from agentkb.adapters.aws.opensearch.index import OpenSearchIndex, index_body
from agentkb.adapters.aws.opensearch.transport import HttpResponse, JsonClient, set_deadline
from agentkb.errors import DependencyError, ServiceUnavailable
from agentkb.models.domain import EmbeddingProfile


class Scripted:
    """Answers requests with scripted (status, body) pairs, in order; records what was sent."""

    def __init__(self, *answers: tuple[int, Any]) -> None:
        self.answers = list(answers)
        self.sent: list[tuple[str, str, bytes | None]] = []

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        self.sent.append((method, path, body))
        status, payload = self.answers.pop(0)
        return HttpResponse(status, json.dumps(payload).encode() if payload is not None else b"", {})


def test_throttling_is_retried_then_succeeds() -> None:
    transport = Scripted((429, {"error": {"type": "throttled"}}), (503, None), (200, {"ok": True}))
    delays: list[float] = []
    client = JsonClient(transport, sleep=delays.append, rng=lambda: 1.0)
    assert client.call("GET", "/x", operation="probe") == (200, {"ok": True})
    assert delays == [0.1, 0.2]  # exponential; full jitter scales these by random()


def test_throttling_that_outlasts_the_deadline_is_a_503_with_retry_after() -> None:
    transport = Scripted(*[(429, None)] * 50)
    client = JsonClient(transport, sleep=time.sleep, rng=lambda: 1.0, max_call_s=0.25)
    with pytest.raises(ServiceUnavailable) as caught:
        client.call("POST", "/i/_search", {"query": {}}, operation="lexical_search")
    assert caught.value.http_status == 503 and caught.value.headers["Retry-After"] == "5"
    assert 2 <= len(transport.sent) <= 3


def test_the_lambda_deadline_bounds_retries() -> None:
    set_deadline(900, margin_ms=800)  # 100 ms left
    try:
        client = JsonClient(Scripted(*[(502, None)] * 50), sleep=time.sleep, rng=lambda: 1.0)
        with pytest.raises(ServiceUnavailable):
            client.call("GET", "/x", operation="probe")
    finally:
        set_deadline(None)


def test_client_errors_are_not_retried_and_leak_no_body() -> None:
    transport = Scripted((400, {"error": {"type": "mapper_parsing_exception", "reason": "secret text"}}))
    with pytest.raises(DependencyError) as caught:
        JsonClient(transport, sleep=lambda _: None).call("GET", "/x", operation="probe")
    assert "mapper_parsing_exception" in str(caught.value) and "secret text" not in str(caught.value)
    assert len(transport.sent) == 1


def test_bulk_resends_only_the_throttled_items() -> None:
    item_ok = {"index": {"status": 201}}
    item_429 = {"index": {"status": 429, "error": {"type": "es_rejected_execution_exception"}}}
    transport = Scripted((200, {"errors": True, "items": [item_ok, item_429]}),
                         (200, {"errors": False, "items": [item_ok]}))
    index = OpenSearchIndex(JsonClient(transport, sleep=lambda _: None), None, None,  # type: ignore[arg-type]
                            prefix="agentkb", generation="classic", default_profile=None)
    lines = [{"index": {"_index": "i"}}, {"chunk_id": "a"}, {"index": {"_index": "i"}}, {"chunk_id": "b"}]
    index._bulk("i", lines)
    resent = [json.loads(line) for line in transport.sent[1][2].decode().splitlines()]  # type: ignore[union-attr]
    assert resent == [{"index": {"_index": "i"}}, {"chunk_id": "b"}]


def test_nextgen_mappings_carry_no_engine_and_classic_uses_faiss() -> None:
    profile = EmbeddingProfile("amazon.titan-embed-text-v2:0", 1024)
    classic = index_body(profile, "classic")["mappings"]["properties"]["embedding"]
    nextgen = index_body(profile, "nextgen")["mappings"]["properties"]["embedding"]
    assert classic["method"]["engine"] == "faiss" and classic["method"]["space_type"] == "cosinesimil"
    assert "engine" not in json.dumps(nextgen) and nextgen["dimension"] == 1024
