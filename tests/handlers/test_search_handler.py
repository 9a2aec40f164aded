"""POST /api/v2/knowledge/search through the real lambda_handler: contract, modes, filters, every error status."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkb.composition import Ports
from tests.helpers import (
    ERROR_RESPONSE,
    SEARCH_RESPONSE,
    body_of,
    embedded_db,
    http_event,
    invoke,
    mint,
    response_headers,
    rest_event,
)

PATH = "/api/v2/knowledge/search"
DOCS = {
    "reset.md": ("To reset your password, open Settings and choose Security, then Reset password.",
                 {"category": "account", "priority": 1, "updated": "2026-01-10", "public": True}),
    "invoices.md": ("Invoices are issued on the first day of each billing period. Failed payments are retried.",
                    {"category": "billing", "priority": 2, "updated": "2026-05-01", "public": True}),
    "runbook.md": ("Acknowledge the page within five minutes and open an incident channel.",
                   {"category": "operations", "priority": 3, "updated": "2026-09-30", "public": False}),
}
TAGS = [{"tagName": "category", "fieldType": "text"}, {"tagName": "priority", "fieldType": "number"},
        {"tagName": "updated", "fieldType": "date"}, {"tagName": "public", "fieldType": "boolean"}]


def create_kb(key: str, name: str = "docs", workspace: str = "ws1", tags: list[dict[str, str]] | None = None) -> str:
    response = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases",
                                           {"workspaceId": workspace, "name": name, "tagDefinitions": tags or TAGS},
                                           key=key))
    assert response["statusCode"] == 201, response["body"]
    return str(body_of(response)["data"]["id"])


def add_doc(key: str, kb: str, name: str, content: str, tags: dict[str, Any] | None = None, ws: str = "ws1") -> dict:
    response = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents",
                                           {"workspaceId": ws, "name": name, "content": content, "tags": tags},
                                           key=key))
    assert response["statusCode"] == 201, response["body"]
    return body_of(response)["data"]


@pytest.fixture()
def kb(rw_key: str) -> str:
    kb_id = create_kb(rw_key)
    for name, (content, tags) in DOCS.items():
        add_doc(rw_key, kb_id, name, content, tags)
    return kb_id


def search(key: str | None, body: Any, **kwargs: Any) -> tuple[int, Any, dict[str, str]]:
    response = invoke("search", rest_event("POST", PATH, body, key=key, **kwargs))
    return response["statusCode"], body_of(response), response_headers(response)


def ok(key: str, body: dict[str, Any]) -> dict[str, Any]:
    status, payload, headers = search(key, body)
    assert status == 200, payload
    SEARCH_RESPONSE.validate(payload)
    assert {"x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"} <= set(headers)
    return payload["data"]  # type: ignore[no-any-return]


def test_hybrid_search_ranks_the_answer_first(rw_key: str, kb: str) -> None:
    data = ok(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "How do I reset my password?"})
    top = data["results"][0]
    assert top["documentName"] == "reset.md" and top["rank"] == 1
    assert top["metadata"] == {"category": "account", "priority": 1, "updated": "2026-01-10", "public": True}
    assert 0 < top["similarity"] <= 1 and top["rankScore"] <= 2 / 61 + 1e-9
    assert [r["rank"] for r in data["results"]] == list(range(1, len(data["results"]) + 1))
    assert data["rerankerStatus"] == "not_requested" and data["knowledgeBaseIds"] == [kb]
    assert "rerankerScore" not in top and top["sourceUrl"] is None


def test_vector_mode_rank_score_equals_similarity(rw_key: str, kb: str) -> None:
    data = ok(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "billing invoices",
                       "searchMode": "vector", "topK": 2})
    assert len(data["results"]) == 2 and data["topK"] == 2 and data["totalResults"] == 2
    assert all(r["rankScore"] == r["similarity"] for r in data["results"])
    sims = [r["similarity"] for r in data["results"]]
    assert sims == sorted(sims, reverse=True)


def test_same_request_same_bytes(rw_key: str, kb: str) -> None:
    body = {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "incident page"}
    assert search(rw_key, body)[1] == search(rw_key, body)[1]


@pytest.mark.parametrize(("flt", "expected"), [
    ({"tagName": "category", "value": "billing"}, {"invoices.md"}),
    ({"tagName": "category", "operator": "neq", "value": "billing"}, {"reset.md", "runbook.md"}),
    ({"tagName": "category", "operator": "starts_with", "value": "oper"}, {"runbook.md"}),
    ({"tagName": "category", "operator": "contains", "value": "%"}, set()),
    ({"tagName": "priority", "operator": "gte", "value": 2}, {"invoices.md", "runbook.md"}),
    ({"tagName": "priority", "operator": "between", "value": 1, "valueTo": 2}, {"reset.md", "invoices.md"}),
    ({"tagName": "updated", "operator": "lt", "value": "2026-05-01"}, {"reset.md"}),
    ({"tagName": "public", "value": False, "fieldType": "boolean"}, {"runbook.md"}),
])
def test_tag_only_search(rw_key: str, kb: str, flt: dict[str, Any], expected: set[str]) -> None:
    data = ok(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "tagFilters": [flt]})
    assert {r["documentName"] for r in data["results"]} == expected
    assert data["query"] == "" and all(r["similarity"] == 1 for r in data["results"])


def test_filters_apply_inside_the_query_legs(rw_key: str, kb: str) -> None:
    data = ok(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "reset my password",
                       "tagFilters": [{"tagName": "category", "value": "billing"}]})
    assert [r["documentName"] for r in data["results"]] == ["invoices.md"]


def test_reranker_statuses(rw_key: str, kb: str) -> None:
    base = {"workspaceId": "ws1", "knowledgeBaseIds": [kb]}
    assert ok(rw_key, {**base, "query": "password", "rerankerEnabled": True})["rerankerStatus"] == "unavailable"
    assert ok(rw_key, {**base, "query": "password", "rerankerEnabled": False})["rerankerStatus"] == "not_requested"
    tag_only = {**base, "tagFilters": [{"tagName": "priority", "value": 1}], "rerankerEnabled": True}
    assert ok(rw_key, tag_only)["rerankerStatus"] == "skipped"
    none = {**base, "tagFilters": [{"tagName": "priority", "value": 99}], "rerankerEnabled": True}
    assert ok(rw_key, none)["rerankerStatus"] == "skipped"


def test_multi_kb_fair_share(rw_key: str) -> None:
    big = create_kb(rw_key, "big")
    small = create_kb(rw_key, "small")
    for i in range(6):
        add_doc(rw_key, big, f"pw{i}.md", f"Password reset procedure variant {i}: open settings, reset password.")
    add_doc(rw_key, small, "other.md", "Cafeteria menu for Tuesday: soup and bread.")
    data = ok(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [big, small], "query": "reset password", "topK": 3})
    assert {r["knowledgeBaseId"] for r in data["results"]} == {big, small}


def test_multi_kb_with_different_profiles_is_400(rw_key: str, kb: str, bundle: Ports) -> None:
    other = create_kb(rw_key, "other")
    embedded_db(bundle).connection().execute("UPDATE knowledge_bases SET embedding_dimension = 768 WHERE id = ?",
                                                (other,))
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb, other], "query": "x"})
    assert status == 400 and payload["error"]["code"] == "BAD_REQUEST"
    # tag-only searches do not need compatible profiles
    assert search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb, other],
                           "tagFilters": [{"tagName": "priority", "value": 1}]})[0] == 200


def error(status: int, payload: Any, code: str) -> None:
    assert payload["error"]["code"] == code, payload
    ERROR_RESPONSE.validate(payload)
    assert "Traceback" not in json.dumps(payload)


@pytest.mark.parametrize("body", [
    {"workspaceId": "ws1"}, {"workspaceId": "ws1", "knowledgeBaseIds": "k", "topK": 0},
    {"workspaceId": "ws1", "knowledgeBaseIds": "k", "query": "q", "unexpected": True},
    {"workspaceId": "ws1", "knowledgeBaseIds": "k", "topK": 2.5, "query": "q"},
])
def test_400_validation_with_issue_paths(rw_key: str, body: dict[str, Any]) -> None:
    status, payload, _ = search(rw_key, body)
    assert status == 400
    error(status, payload, "BAD_REQUEST")
    assert isinstance(payload["error"]["details"], list) and payload["error"]["details"][0]["path"]


def test_400_query_or_filters_required_and_filter_errors(rw_key: str, kb: str) -> None:
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "  "})
    assert status == 400 and payload["error"]["details"][0]["path"] == "query"
    for flt in ({"tagName": "nope", "value": 1}, {"tagName": "priority", "operator": "contains", "value": 1},
                {"tagName": "priority", "operator": "between", "value": 1}):
        status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "tagFilters": [flt]})
        assert status == 400, flt
        error(status, payload, "BAD_REQUEST")


def test_400_malformed_json_and_empty_query_parameter(rw_key: str) -> None:
    status, payload, _ = search(rw_key, None, raw_body='{"workspaceId": ')
    assert status == 400 and payload["error"]["code"] == "BAD_REQUEST"
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": "k", "query": "q"},
                                query={"limit": ""})
    assert status == 400


def test_401_missing_or_wrong_key(kb: str) -> None:
    body = {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "q"}
    for key in (None, "akb_0000_bad"):
        status, payload, headers = search(key, body)
        assert status == 401
        error(status, payload, "UNAUTHORIZED")
        assert "x-ratelimit-limit" not in headers


def test_403_insufficient_scope(bundle: Ports, kb: str) -> None:
    write_only = mint(bundle, ["ws1"], ["api:write"])
    status, payload, _ = search(write_only, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "q"})
    assert status == 403
    error(status, payload, "FORBIDDEN")
    assert payload["error"]["details"]["code"] == "INSUFFICIENT_SCOPE"


def test_404_missing_kb_and_other_workspace_are_indistinguishable(rw_key: str, other_key: str, kb: str) -> None:
    missing = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": "nope", "query": "q"})
    foreign = search(other_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "q"})
    wrong_ws = search(other_key, {"workspaceId": "ws2", "knowledgeBaseIds": kb, "query": "q"})
    for status, payload, _ in (missing, foreign, wrong_ws):
        assert status == 404
        error(status, payload, "NOT_FOUND")
    assert foreign[1]["error"]["message"] == wrong_ws[1]["error"]["message"]


def test_413_before_parsing(rw_key: str) -> None:
    raw = '{"workspaceId": "' + "x" * (2 * 1024 * 1024) + '"'  # not even valid JSON: size is decided first
    status, payload, _ = search(rw_key, None, raw_body=raw)
    assert status == 413
    error(status, payload, "PAYLOAD_TOO_LARGE")


def test_415_non_json_body(rw_key: str) -> None:
    status, payload, _ = search(rw_key, None, raw_body="query=x", headers={"Content-Type": "text/plain"})
    assert status == 415
    error(status, payload, "UNSUPPORTED_MEDIA_TYPE")


def test_429_with_retry_after(bundle: Ports, kb: str, monkeypatch: pytest.MonkeyPatch, one_rate_window: float) -> None:
    from agentkb.composition import reset_ports
    from agentkb.config import reset_settings

    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "2")
    reset_settings()
    reset_ports()
    key = mint(bundle, ["ws1"], ["api:read"])
    body = {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "q"}
    results = [search(key, body) for _ in range(3)]
    assert [r[0] for r in results[:2]] == [200, 200]
    status, payload, headers = results[2]
    assert status == 429
    error(status, payload, "RATE_LIMITED")
    assert int(headers["retry-after"]) >= 1 and headers["x-ratelimit-remaining"] == "0"
    assert headers["x-ratelimit-limit"] == "2" and headers["x-ratelimit-reset"].endswith("Z")


def test_500_hides_internals(rw_key: str, kb: str, bundle: Ports, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: Any, **__: Any) -> Any:
        raise RuntimeError("secret internal detail /var/lib/db")

    monkeypatch.setattr(type(bundle.index), "lexical_search", boom)
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "q"})
    assert status == 500
    error(status, payload, "INTERNAL_ERROR")
    assert "secret" not in json.dumps(payload)


def test_hybrid_degrades_to_lexical_with_a_signal(rw_key: str, kb: str, bundle: Ports,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.errors import EmbeddingUnavailable

    def down(*_: Any) -> Any:
        raise EmbeddingUnavailable("model timed out", code="timeout", retryable=True)  # a permanent one is a 500

    monkeypatch.setattr(type(bundle.embedder), "embed_query", down)
    status, payload, headers = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "password"})
    assert status == 200 and headers["x-search-degraded"] == "vector_unavailable"
    SEARCH_RESPONSE.validate(payload)
    status, payload, headers = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "password",
                                               "searchMode": "vector"})
    assert status == 503 and headers["retry-after"] == "5"
    error(status, payload, "SERVICE_UNAVAILABLE")


def test_http_api_v2_and_direct_invocation(rw_key: str, kb: str) -> None:
    body = {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "password reset", "topK": 1}
    v2 = invoke("search", http_event("POST", PATH, body, key=rw_key))
    assert v2["statusCode"] == 200 and "x-ratelimit-limit" in {k.lower() for k in v2["headers"]}
    SEARCH_RESPONSE.validate(body_of(v2))
    direct = invoke("search", {"operation": "searchKnowledge", "body": body,
                               "principal": {"id": "svc", "workspaces": ["ws1"], "scopes": ["api:read"]}})
    assert direct["statusCode"] == 200 and direct["body"] == body_of(v2)
    denied = invoke("search", {"operation": "searchKnowledge", "body": body,
                               "principal": {"id": "svc", "workspaces": ["ws2"], "scopes": ["api:read"]}})
    assert denied["statusCode"] == 404
    unknown = invoke("search", {"operation": "nope", "body": {}})
    assert unknown["statusCode"] == 400 and unknown["body"]["error"]["code"] == "BAD_REQUEST"


def test_one_function_app_serves_concurrent_requests(rw_key: str, kb: str) -> None:
    """The threaded local gateway calls one FunctionApp from many threads: no request may see another's state."""
    from concurrent.futures import ThreadPoolExecutor

    bodies = [{"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": q, "topK": 1}
              for q in ("password", "invoices", "incident", "settings") * 6]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda b: search(rw_key, b), bodies))
    assert [status for status, _, _ in results] == [200] * len(bodies)
    assert all(payload["data"]["query"] == body["query"] for (_, payload, _), body in zip(results, bodies, strict=True))
