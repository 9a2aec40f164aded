"""X-Search-Leg-Ranks: each search result's rank in the BM25 leg and in the vector leg, in result order (the
upstream result object allows no extra field), in every mode and when the vector leg is down."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkb.composition import Ports
from tests.helpers import SEARCH_RESPONSE, body_of, invoke, response_headers, rest_event

BASES = "/api/v2/knowledge/bases"
DOCS = {"reset.md": "To reset your password, open Settings and choose Security, then Reset password.",
        "invoices.md": "Invoices are issued on the first day of each billing period.",
        "runbook.md": "Acknowledge the page within five minutes and open an incident channel."}


@pytest.fixture()
def kb(rw_key: str) -> str:
    created = body_of(invoke("ingest", rest_event("POST", BASES, {"workspaceId": "ws1", "name": "help"}, key=rw_key)))
    kb_id = str(created["data"]["id"])
    for name, content in DOCS.items():
        response = invoke("ingest", rest_event("POST", f"{BASES}/{kb_id}/documents",
                                               {"workspaceId": "ws1", "name": name, "content": content}, key=rw_key))
        assert response["statusCode"] == 201, body_of(response)
    return kb_id


def search(key: str, kb: str, **extra: Any) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]:
    response = invoke("search", rest_event("POST", "/api/v2/knowledge/search", {
        "workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "reset password", "topK": 3, **extra}, key=key))
    assert response["statusCode"] == 200, body_of(response)
    headers = response_headers(response)
    payload = body_of(response)
    SEARCH_RESPONSE.validate(payload)  # the results stay exactly the upstream shape
    return payload, json.loads(headers["x-search-leg-ranks"]), headers


def test_hybrid_hits_carry_their_rank_in_each_leg(rw_key: str, kb: str) -> None:
    payload, ranks, headers = search(rw_key, kb, searchMode="hybrid")
    results = payload["data"]["results"]
    assert len(ranks) == len(results) == 3
    assert results[0]["documentName"] == "reset.md" and ranks[0]["bm25"] == 1 and ranks[0]["vector"] is not None
    # documents without the query's words are found by the vector leg alone
    assert [r["bm25"] for r in ranks[1:]] == [None, None] and all(r["vector"] for r in ranks)
    assert set(ranks[0]) == {"bm25", "vector"}
    assert " " not in headers["x-search-leg-ranks"]  # compact JSON


def test_vector_mode_names_no_bm25_rank(rw_key: str, kb: str) -> None:
    _, ranks, _ = search(rw_key, kb, searchMode="vector")
    assert [r["vector"] for r in ranks] == [1, 2, 3] and {r["bm25"] for r in ranks} == {None}


def test_a_degraded_hybrid_search_has_no_vector_ranks(rw_key: str, kb: str, bundle: Ports,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.errors import EmbeddingUnavailable

    def down(*_: Any) -> Any:
        raise EmbeddingUnavailable("model timed out", code="timeout", retryable=True)

    monkeypatch.setattr(type(bundle.embedder), "embed_query", down)
    payload, ranks, headers = search(rw_key, kb, searchMode="hybrid", query="reset password invoices")
    assert headers["x-search-degraded"] == "vector_unavailable"
    assert len(ranks) == len(payload["data"]["results"]) >= 1
    assert [r["bm25"] for r in ranks] == list(range(1, len(ranks) + 1)) and {r["vector"] for r in ranks} == {None}


def test_the_openapi_document_declares_the_search_headers() -> None:
    openapi = body_of(invoke("search", rest_event("GET", "/openapi.json")))
    headers = openapi["paths"]["/api/v2/knowledge/search"]["post"]["responses"]["200"]["headers"]
    assert set(headers) == {"X-Search-Leg-Ranks", "X-Search-Degraded"}
    assert all(h["schema"] == {"type": "string"} and h["description"] for h in headers.values())
