"""Degradation: a failing, hanging or mismatched embedder -> FTS5 fallback (200) or 503 with failOnDegraded."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.errors import EmbeddingUnavailable
from tests.handlers.recall.recall_helpers import (
    FailingEmbedder,
    HashEmbedder,
    call,
    recall,
    recall_body,
    write,
)


@pytest.fixture()
def corpus(bundle: Ports, rw_key: str, fake_embedder: Any) -> str:
    write(rw_key, "deploy", "deploy the billing service with CDK", entities={"repos": ["billing"]})
    write(rw_key, "other", "lunch menu", entities={"repos": ["billing"]})
    return rw_key


def _fast_timeout(override_ports: Any, bundle: Ports, ms: int = 50) -> None:
    override_ports(settings=bundle.settings.model_copy(update={"embed_timeout_ms": ms}))


def assert_fts_fallback(out: dict[str, Any], code: str) -> None:
    assert out["vec_degraded"] is True and out["vec_degraded_code"] == code
    assert out["warning"] and out["backend_invoked"] == "none" and out["graph_matches"] == []
    assert out["results"] and all(i["source"] == "fts_fallback" for i in out["results"])
    assert out["results"][0]["name"] == "deploy"


@pytest.mark.parametrize(("error", "code"), [
    (RuntimeError("boom"), "embedding_failed"),
    (EmbeddingUnavailable("quota", code="oauth_quota"), "oauth_quota"),
    (EmbeddingUnavailable("weird", code="not-a-contract-code"), "embedding_failed"),
])
def test_a_failing_embedder_falls_back_to_fts(override_ports: Any, corpus: str, error: Exception, code: str) -> None:
    override_ports(embedder=FailingEmbedder(error=error))
    out = recall(corpus, query="deploy billing")
    assert_fts_fallback(out, code)
    assert out["vec_error"] and "boom" not in out["vec_error"] or code != "embedding_failed"


def test_a_hanging_embedder_times_out(override_ports: Any, bundle: Ports, corpus: str) -> None:
    release = threading.Event()
    override_ports(embedder=FailingEmbedder(hang=release))
    _fast_timeout(override_ports, bundle)
    try:
        assert_fts_fallback(recall(corpus, query="deploy billing"), "timeout")
        status, body, headers = call("recall", "/v1/recall", recall_body(query="deploy billing"), corpus,
                                     {"failOnDegraded": "true"})
        assert status == 503 and body["error"]["code"] == "SERVICE_UNAVAILABLE"
        assert body["error"]["details"]["code"] == "timeout" and headers["retry-after"] == "5"
    finally:
        release.set()


def test_fail_on_degraded_without_retry_advice_for_permanent_codes(override_ports: Any, corpus: str) -> None:
    override_ports(embedder=FailingEmbedder(error=RuntimeError("down")))
    status, body, headers = call("recall", "/v1/recall", recall_body(query="deploy"), corpus,
                                 {"failOnDegraded": "true"})
    assert status == 503 and body["error"]["details"]["code"] == "embedding_failed" and "retry-after" not in headers


def test_operator_requested_fts_only(corpus: str) -> None:
    out = recall(corpus, query="deploy billing", params={"fallback": "fts_only"})
    assert_fts_fallback(out, "fallback_fts_only")
    status, _, headers = call("recall", "/v1/recall", recall_body(query="deploy"), corpus, {"fallback": "fts_only"})
    assert headers["x-recall-degraded"] == "fallback_fts_only"
    assert recall(corpus, expect=400, params={"fallback": "vector"})["error"]["code"] == "BAD_REQUEST"
    assert recall(corpus, query="deploy billing", params={"failOnDegraded": "false"})["backend_invoked"] == "local"


def test_a_dimension_mismatch_is_backend_mismatch(override_ports: Any, corpus: str) -> None:
    class Wider(HashEmbedder):
        def embed_query(self, text: str) -> list[float]:
            return [1.0] + [0.0] * 99

    override_ports(embedder=Wider())
    assert_fts_fallback(recall(corpus, query="deploy billing"), "backend_mismatch")


def test_an_empty_vector_is_dim_zero(override_ports: Any, corpus: str) -> None:
    class Empty(HashEmbedder):
        def embed_query(self, text: str) -> list[float]:
            return []

    override_ports(embedder=Empty())
    assert_fts_fallback(recall(corpus, query="deploy billing"), "dim_zero")


def test_fts_fallback_still_applies_eligibility(override_ports: Any, corpus: str) -> None:
    write(corpus, "secret-deploy", "deploy billing code", sensitivity={"contains_code": True})
    override_ports(embedder=FailingEmbedder(error=RuntimeError("down")))
    assert "secret-deploy" not in [i["name"] for i in recall(corpus, query="deploy billing")["results"]]
