"""Routes, the gate and the queue consumer take their ports from `get_ports` through the resolvers' overrides."""

from __future__ import annotations

from typing import Any

import pytest

from agentkb.api.functions import search_app
from agentkb.api.routes.search import search_deps
from agentkb.composition import Ports, get_ports
from agentkb.errors import EmbeddingUnavailable
from agentkb.models.domain import RateDecision
from agentkb.services.search.service import SearchDeps
from tests.handlers.test_search_handler import DOCS, add_doc, create_kb, search
from tests.helpers import invoke, response_headers, rest_event


@pytest.fixture()
def kb(rw_key: str) -> str:
    kb_id = create_kb(rw_key)
    for name, (content, tags) in DOCS.items():
        add_doc(rw_key, kb_id, name, content, tags)
    return kb_id


class BrokenEmbedder:
    def __init__(self, real: Any) -> None:
        self.model_id, self.dimension = real.model_id, real.dimension

    def embed_query(self, text: str) -> list[float]:
        raise EmbeddingUnavailable("model down", code="embedding_failed")

    def embed_documents(self, texts: Any) -> list[list[float]]:
        raise EmbeddingUnavailable("model down", code="embedding_failed")


class DenyingLimiter:
    def hit(self, key_id: str, limit: int, now: float) -> RateDecision:
        return RateDecision(limit=1, remaining=0, reset_epoch=int(now) + 60, allowed=False, retry_after_s=60)


def test_a_route_sees_the_overridden_bundle(kb: str, rw_key: str, bundle: Ports, override_ports: Any) -> None:
    # Given the bundle with a broken embedder served to every function
    override_ports(embedder=BrokenEmbedder(bundle.embedder))
    # When a hybrid search runs, Then it answers lexical-only and says so
    status, payload, headers = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "password"})
    assert status == 200 and payload["data"] and headers["x-search-degraded"] == "vector_unavailable"
    # And the process's own bundle is untouched
    assert get_ports() is bundle and type(bundle.embedder).__name__ != "BrokenEmbedder"


def test_the_gate_uses_the_overridden_bundle(rw_key: str, override_ports: Any) -> None:
    override_ports(rate_limiter=DenyingLimiter())
    response = invoke("search", rest_event("POST", "/api/v2/knowledge/search",
                                           {"workspaceId": "ws1", "knowledgeBaseIds": ["kb"], "query": "q"},
                                           key=rw_key))
    assert response["statusCode"] == 429 and response_headers(response)["retry-after"] == "60"


def test_a_narrow_provider_can_be_overridden_alone(kb: str, rw_key: str, bundle: Ports, monkeypatch: Any) -> None:
    seen: list[SearchDeps] = []

    def recording(ports: Any = None) -> SearchDeps:
        deps = search_deps(bundle)
        seen.append(deps)
        return deps

    monkeypatch.setitem(search_app().dependency_overrides, search_deps, recording)
    status, _, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "password"})
    assert status == 200 and len(seen) == 1
