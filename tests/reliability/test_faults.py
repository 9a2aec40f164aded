"""Fault injection through the real handlers: a dependency fault degrades with a signal, or answers 503 +
Retry-After when a retry can succeed and 500 INTERNAL_ERROR (no internals, no Retry-After) when it cannot;
concurrent writers lose nothing; a crash mid-ingest leaves nothing half-indexed."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from agentkb.composition import Ports, get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.errors import DependencyError, EmbeddingUnavailable, ServiceUnavailable
from agentkb.models.domain import RerankOutcome
from tests.helpers import SEARCH_RESPONSE, body_of, embedded_db, invoke, mint, response_headers, rest_event
from tests.reliability.corpus import KB, WS, replay, schema_validator, seed
from tests.reliability.make_events import RECALL

SEARCH = "/api/v2/knowledge/search"


@pytest.fixture()
def keys(bundle: Ports) -> dict[str, str]:
    return seed(bundle)


def call(path: str, body: Any, key: str, query: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    response = replay(rest_event("POST", path, body, key=key, query=query))
    return response["statusCode"], body_of(response), response_headers(response)


def search(key: str, **extra: Any) -> tuple[int, Any, dict[str, str]]:
    return call(SEARCH, {"workspaceId": WS, "knowledgeBaseIds": [KB], "query": "reset password", **extra}, key)


def unavailable(status: int, body: Any, headers: dict[str, str], retry_after: bool = True) -> None:
    assert status == 503, body
    assert body["error"]["code"] == "SERVICE_UNAVAILABLE"
    if retry_after:
        assert int(headers["retry-after"]) >= 1


def internal_error(status: int, body: Any, headers: dict[str, str]) -> None:
    """A permanent dependency failure: retrying cannot help, so no 503 and no Retry-After."""
    assert status == 500, body
    assert body == {"error": {"code": "INTERNAL_ERROR", "message": "Internal server error"}}
    assert "retry-after" not in headers


@pytest.mark.parametrize("failure", [EmbeddingUnavailable("model timed out", code="timeout", retryable=True),
                                     EmbeddingUnavailable("model missing", code="embedding_failed")])
def test_embedder_down_hybrid_degrades_loudly_vector_is_503_or_500(failure: EmbeddingUnavailable,
                                                                    keys: dict[str, str], bundle: Ports,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def embedder_down(*_: Any) -> Any:
        raise failure

    monkeypatch.setattr(type(bundle.embedder), "embed_query", embedder_down)
    status, body, headers = search(keys["akb_test_replay_key"])
    assert status == 200 and headers["x-search-degraded"] == "vector_unavailable"  # never silently
    SEARCH_RESPONSE.validate(body)
    assert body["data"]["results"][0]["documentName"] == "reset.md"  # the lexical leg still answers
    vector = search(keys["akb_test_replay_key"], searchMode="vector")
    unavailable(*vector) if failure.retryable else internal_error(*vector)


def test_healthy_search_carries_no_degraded_header(keys: dict[str, str]) -> None:
    status, _, headers = search(keys["akb_test_replay_key"])
    assert status == 200 and "x-search-degraded" not in headers


@pytest.mark.parametrize("failure", [EmbeddingUnavailable("down", code="embedding_failed"), RuntimeError("boom")])
def test_embedder_down_recall_degrades_with_a_code(failure: Exception, keys: dict[str, str], bundle: Ports,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> Any:
        raise failure

    monkeypatch.setattr(type(bundle.embedder), "embed_query", broken)
    status, body, headers = call("/v1/recall", RECALL, keys["akb_test_replay_key"])
    assert status == 200, body
    assert headers["x-recall-degraded"] == "embedding_failed"
    assert not list(schema_validator("recall-response.schema.json").iter_errors(body))
    status, body, headers = call("/v1/recall", RECALL, keys["akb_test_replay_key"], {"failOnDegraded": "true"})
    # recall sends Retry-After only for retryable codes (timeout, slot_exhausted, cancelled): reported to the lead
    unavailable(status, body, headers, retry_after=False)
    assert body["error"]["details"]["code"] == "embedding_failed"


def test_slow_embedder_recall_times_out_and_degrades(keys: dict[str, str], bundle: Ports,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTKB_EMBED_TIMEOUT_MS", "50")
    reset_settings()
    reset_ports()
    release = threading.Event()

    def slow(*_: Any) -> Any:
        release.wait(2)
        raise EmbeddingUnavailable("too late", code="embedding_failed")

    monkeypatch.setattr(type(get_ports().embedder), "embed_query", slow)
    try:
        # `timeout` (not `embedding_failed`, which the slow model raises after 2 s) proves the wait was bounded.
        status, body, headers = call("/v1/recall", RECALL, keys["akb_test_replay_key"])
        assert status == 200 and headers["x-recall-degraded"] == "timeout", body
        unavailable(*call("/v1/recall", RECALL, keys["akb_test_replay_key"], {"failOnDegraded": "true"}))
    finally:
        release.set()


def test_reranker_down_is_reported_unavailable(keys: dict[str, str], bundle: Ports,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(bundle.reranker), "rerank",
                        lambda *_: RerankOutcome("unavailable", reason="throttled"))
    status, body, _ = search(keys["akb_test_replay_key"], rerankerEnabled=True)
    assert status == 200 and body["data"]["rerankerStatus"] == "unavailable"
    assert all("rerankerScore" not in r for r in body["data"]["results"])


def test_reranker_raising_degrades_to_unavailable(keys: dict[str, str], bundle: Ports,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any) -> Any:
        raise DependencyError("rerank endpoint timed out", code="timeout", retryable=True)

    monkeypatch.setattr(type(bundle.reranker), "rerank", broken)
    status, body, _ = search(keys["akb_test_replay_key"], rerankerEnabled=True)
    assert status == 200 and body["data"]["rerankerStatus"] == "unavailable"
    assert body["data"]["results"] and all("rerankerScore" not in r for r in body["data"]["results"])


@pytest.mark.parametrize(("failure", "retry_after"), [
    (ServiceUnavailable("throttled", retry_after_s=7), 7),
    (DependencyError("index timed out", code="timeout", retryable=True), 5),
    (DependencyError("index busy", code="throttled", retryable=True, retry_after_s=9), 9),
])
@pytest.mark.parametrize("leg", ["lexical_search", "vector_search", "filter_search"])
def test_index_throttled_or_timing_out_is_503_with_retry_after(failure: Exception, retry_after: int, leg: str,
                                                                keys: dict[str, str], bundle: Ports,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise failure

    monkeypatch.setattr(type(bundle.index), leg, broken)
    extra: dict[str, Any] = {"searchMode": "vector"} if leg == "vector_search" else {}
    if leg == "filter_search":
        extra = {"query": None, "tagFilters": [{"tagName": "category", "operator": "eq", "value": "account"}]}
    status, body, headers = search(keys["akb_test_replay_key"], **extra)
    unavailable(status, body, headers)
    assert headers["retry-after"] == str(retry_after)
    assert "timed out" not in str(body) and "rejected" not in str(body)  # no internals


@pytest.mark.parametrize("leg", ["lexical_search", "vector_search", "filter_search"])
def test_index_refusing_the_request_is_a_500_without_internals(leg: str, keys: dict[str, str], bundle: Ports,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise DependencyError("opensearch search failed: mapper_parsing_exception", code="index_failed")

    monkeypatch.setattr(type(bundle.index), leg, broken)
    extra: dict[str, Any] = {"searchMode": "vector"} if leg == "vector_search" else {}
    if leg == "filter_search":
        extra = {"query": None, "tagFilters": [{"tagName": "category", "operator": "eq", "value": "account"}]}
    internal_error(*search(keys["akb_test_replay_key"], **extra))


def test_index_down_on_the_write_path_is_503(keys: dict[str, str], bundle: Ports,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise DependencyError("index unavailable", code="throttled", retryable=True)

    monkeypatch.setattr(type(bundle.index), "write_document", broken)
    status, body, headers = call(f"/api/v2/knowledge/bases/{KB}/documents",
                                 {"workspaceId": WS, "name": "new.md", "content": "Fresh text."},
                                 keys["akb_test_replay_key"])
    unavailable(status, body, headers)


def test_key_store_or_rate_limiter_down_is_503_not_a_crash(keys: dict[str, str], bundle: Ports,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise DependencyError("table throttled", code="throttled", retryable=True)

    monkeypatch.setattr(type(bundle.rate_limiter), "hit", broken)
    unavailable(*search(keys["akb_test_replay_key"]))
    monkeypatch.undo()
    monkeypatch.setattr(type(bundle.keys), "get_key", broken)
    unavailable(*search(keys["akb_test_replay_key"]))


def test_concurrent_rate_limit_hits_lose_no_update(bundle: Ports) -> None:
    # Given 8 threads hitting one key's window 400 times, When they race, Then every hit is counted exactly once.
    limiter, now = bundle.rate_limiter, 1_800_000_000.0
    with ThreadPoolExecutor(8) as pool:
        decisions = list(pool.map(lambda _: limiter.hit("hammer", 10_000, now), range(400)))
    remaining = sorted(d.remaining for d in decisions)
    assert remaining == list(range(10_000 - 400, 10_000))  # each count seen once: no lost or doubled update
    assert limiter.hit("hammer", 10_000, now).remaining == 10_000 - 401


def test_concurrent_requests_count_against_the_limit_exactly(bundle: Ports, monkeypatch: pytest.MonkeyPatch,
                                                             one_rate_window: float) -> None:
    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "30")
    reset_settings()
    reset_ports()
    key = mint(get_ports(), ["ws1"], ["api:read"])
    event = rest_event("GET", "/api/v2/knowledge/bases/nope/tags", key=key, query={"workspaceId": "ws1"},
                       resource="/api/v2/knowledge/bases/{knowledgeBaseId}/tags")
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda _: invoke("ingest", dict(event))["statusCode"], range(48)))
    assert statuses.count(404) == 30 and statuses.count(429) == 18  # exactly the limit got through


def test_concurrent_key_creation_and_document_writes(bundle: Ports, keys: dict[str, str]) -> None:
    with ThreadPoolExecutor(8) as pool:
        minted = list(pool.map(lambda i: mint(bundle, [WS], ["api:read", "api:write"], f"p{i}"), range(24)))
    assert len(set(minted)) == 24
    path = f"/api/v2/knowledge/bases/{KB}/documents"

    def write(i: int) -> int:
        body = {"workspaceId": WS, "name": f"doc-{i}.md", "content": f"Document number {i} about topic {i}."}
        return int(replay(rest_event("POST", path, body, key=minted[i]))["statusCode"])

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(write, range(24))) == [201] * 24
    names = {d.name for d in bundle.catalog.list_documents(KB, 200)[0]}
    assert {f"doc-{i}.md" for i in range(24)} <= names


def test_crash_mid_ingest_leaves_nothing_half_indexed_and_a_retry_completes(
        keys: dict[str, str], bundle: Ports, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.adapters.embedded.sqlite import bulk_load

    real_vector_bytes = bulk_load.vector_bytes
    calls = {"n": 0}

    def crashing_vector_bytes(vector: Any) -> bytes | None:  # dies after the first chunk, inside the transaction
        calls["n"] += 1
        if calls["n"] == 2:
            raise MemoryError("killed mid-write")
        return real_vector_bytes(vector)

    content = " ".join(f"Sentence {i} explains how the VPN client negotiates a tunnel." for i in range(120))
    body = {"workspaceId": WS, "name": "vpn.md", "content": content}
    path = f"/api/v2/knowledge/bases/{KB}/documents"
    monkeypatch.setattr(bulk_load, "vector_bytes", crashing_vector_bytes)
    crashed = replay(rest_event("POST", path, body, key=keys["akb_test_replay_key"]))
    assert crashed["statusCode"] == 500 and "killed" not in crashed["body"]
    db = embedded_db(bundle).connection()
    assert db.execute("SELECT COUNT(*) FROM documents WHERE name = 'vpn.md'").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM chunks WHERE content LIKE '%VPN client%'").fetchone()[0] == 0
    monkeypatch.setattr(bulk_load, "vector_bytes", real_vector_bytes)
    retried = replay(rest_event("POST", path, body, key=keys["akb_test_replay_key"]))
    assert retried["statusCode"] == 201
    chunk_count = body_of(retried)["data"]["chunkCount"]
    assert chunk_count > 1
    assert db.execute("SELECT COUNT(*) FROM chunks WHERE content LIKE '%VPN client%'").fetchone()[0] == chunk_count
    status, found, _ = search(keys["akb_test_replay_key"], query="VPN tunnel")
    assert status == 200 and found["data"]["results"][0]["documentName"] == "vpn.md"


def test_concurrent_requests_over_several_functions_each_resolve_their_own_body(keys: dict[str, str],
                                                                                  bundle: Ports) -> None:
    # Powertools keeps the current event on the BaseRouter class: two functions resolving at once in the threaded
    # local gateway once swapped request bodies. The resolvers keep request state per thread (api/resolver_state.py,
    # no resolve lock): mixed concurrent traffic over three functions answers each request with its own body.
    key = keys["akb_test_replay_key"]
    requests = [("/v1/recall", RECALL), (SEARCH, {"workspaceId": WS, "knowledgeBaseIds": [KB], "query": "reset"}),
                ("/v1/memories", {"workspace_id": WS, "visibility": "workspace", "type": "note", "name": "race",
                                  "body": "A note written while other functions resolve."})]
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda i: call(*requests[i % 3], key)[:2], range(60)))
    assert [(s, b) for s, b in answers if s >= 400] == []
