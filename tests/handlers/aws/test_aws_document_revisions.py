"""Document writes serialised per name (issue 23) on the AWS engine: moto DynamoDB (the name item's revision is
claimed with a conditional write before anything is indexed; the record commits conditionally) and the in-memory
OpenSearch, through the ingest lambda_handler."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from botocore.client import BaseClient
from test_aws_management import _drain_queue, _items, call

from agentkb.api.functions import ingest_app
from agentkb.api.routes.ingest import ingest_deps
from testkit.aws_backend import AwsBackend
from tests.handlers.test_background_indexing import TEXT
from tests.handlers.test_document_revisions import SMALL_LIMIT
from tests.reliability.test_document_write_race import assert_serialised, write_concurrently

BASES = "/api/v2/knowledge/bases"


@pytest.fixture()
def key(aws_backend: AwsBackend) -> str:
    return aws_backend.key(["ws1"], ["api:read", "api:write"])


@pytest.fixture()
def kb(key: str) -> str:
    status, body = call("POST", BASES, key, {"workspaceId": "ws1", "name": "docs"})
    assert status == 201, body
    return str(body["data"]["id"])


@pytest.fixture()
def atomic_requests(aws_backend: AwsBackend, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """DynamoDB and OpenSearch apply each request atomically; moto and the fake take no lock of their own, so
    concurrent requests are applied one at a time here (as the services do), never interleaved halfway."""
    lock = threading.RLock()
    api_call, request = BaseClient._make_api_call, aws_backend.opensearch.request

    def one_call(client: Any, operation: str, params: Any) -> Any:
        with lock:
            return api_call(client, operation, params)

    def one_request(*args: Any) -> Any:
        with lock:
            return request(*args)

    monkeypatch.setattr(BaseClient, "_make_api_call", one_call)
    monkeypatch.setattr(aws_backend.opensearch, "request", one_request)
    yield


def post(key: str, kb: str, content: str, **extra: Any) -> tuple[int, Any]:
    return call("POST", f"{BASES}/{kb}/documents", key, {"workspaceId": "ws1", "name": "a.md", "content": content,
                                                        **extra})


def indexed(backend: AwsBackend, kb: str) -> list[tuple[int, str]]:
    """(revision, text) of every chunk and document record of the KB in OpenSearch."""
    return sorted((d["revision"], d.get("content") or d.get("text") or "") for index in
                  backend.opensearch.indexes.values() for d in index.values() if d.get("knowledge_base_id") == kb)


def text_revisions(backend: AwsBackend, kb: str) -> set[int]:
    return {int(i["sk"]["S"].split("#")[2]) for i in _items(backend, kb, "DOCTEXT#")}


def test_concurrent_writes_of_one_name_each_get_their_own_revision(key: str, kb: str, atomic_requests: None) -> None:
    assert_serialised(key, kb, write_concurrently(key, kb, "race.md"))


def test_expected_revision_conflicts_answer_409_and_store_nothing(aws_backend: AwsBackend, key: str,
                                                                  kb: str) -> None:
    status, first = post(key, kb, "Otters hold hands while they sleep.", expectedRevision=0)
    assert status == 201 and first["data"]["revision"] == 1
    status, second = post(key, kb, "Badgers dig setts under old oaks.", expectedRevision=1)
    assert status == 201 and second["data"]["revision"] == 2
    before = (indexed(aws_backend, kb), _items(aws_backend, kb))
    for expected in (0, 1, 7):
        status, body = post(key, kb, "Falcons dive at great speed.", expectedRevision=expected)
        assert status == 409 and body["error"]["code"] == "CONFLICT", body
        assert body["error"]["details"] == {"currentRevision": 2, "expectedRevision": expected}
    assert (indexed(aws_backend, kb), _items(aws_backend, kb)) == before  # no chunk, text part or claim moved
    doc = call("GET", f"{BASES}/{kb}/documents/{first['data']['id']}", key, workspaceId="ws1")[1]["data"]
    assert (doc["revision"], doc["content"]) == (2, "Badgers dig setts under old oaks.")
    assert text_revisions(aws_backend, kb) == {2}


class Meanwhile:
    """Another request, run once to its end in its own thread (its own request state) while the caller waits."""

    def __init__(self, write: Callable[[], tuple[int, Any]]) -> None:
        self.write, self.answers, self.started, self._lock = write, [], False, threading.Lock()

    def __call__(self) -> None:
        with self._lock:  # the embedder calls the model from several threads at once
            if self.started:
                return
            self.started = True
        other = threading.Thread(target=lambda: self.answers.append(self.write()))
        other.start()
        other.join(120)


def test_a_slower_write_that_took_a_lower_revision_never_replaces_a_higher_one(
        aws_backend: AwsBackend, key: str, kb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given revision 1, and writer A whose first chunk write waits while writer B's whole write runs
    post(key, kb, "Walruses haul out on the ice.")
    b_writes = Meanwhile(lambda: post(key, kb, "Ibises probe the mud for crabs."))
    request = aws_backend.opensearch.request

    def slow_a(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Any:
        if path.endswith("/_bulk") and b"Herons wait" in (body or b""):
            b_writes()
        return request(method, path, body, headers)

    monkeypatch.setattr(aws_backend.opensearch, "request", slow_a)
    status, a = post(key, kb, "Herons wait in the shallows.")
    # A took revision 2 before it indexed; B, claiming after it, took 3 and committed first
    assert (status, a["data"]["revision"]) == (201, 2)
    assert [(s, b["data"]["revision"]) for s, b in b_writes.answers] == [(201, 3)]  # before: both said 2
    doc = call("GET", f"{BASES}/{kb}/documents/{a['data']['id']}", key, workspaceId="ws1")[1]["data"]
    assert (doc["revision"], doc["content"]) == (3, "Ibises probe the mud for crabs.")
    assert {revision for revision, _ in indexed(aws_backend, kb)} == {3}  # A's chunks left the index
    assert text_revisions(aws_backend, kb) == {3}


def test_a_queued_write_indexed_after_a_later_write_never_replaces_it(
        aws_backend: AwsBackend, key: str, kb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ingest_app().dependency_overrides, ingest_deps,
                        lambda ports: replace(ingest_deps(ports), sync_max_chars=SMALL_LIMIT))
    post(key, kb, "Walruses haul out on the ice.")
    status, accepted = post(key, kb, TEXT)
    assert (status, accepted["data"]["revision"], accepted["data"]["status"]) == (202, 2, "indexing")
    later = Meanwhile(lambda: post(key, kb, "Lynx hunt snowshoe hares."))
    embed = aws_backend.bedrock.invoke_model

    def write_during_embedding(**request: Any) -> Any:
        if "ferry to island" in request["body"]:
            later()
        return embed(**request)

    monkeypatch.setattr(aws_backend.bedrock, "invoke_model", write_during_embedding)
    assert _drain_queue(aws_backend) == 1  # while the consumer embeds revision 2, revision 3 is written
    assert [(s, b["data"]["revision"]) for s, b in later.answers] == [(201, 3)]
    doc = call("GET", f"{BASES}/{kb}/documents/{accepted['data']['id']}", key, workspaceId="ws1")[1]["data"]
    assert (doc["revision"], doc["status"], doc["content"]) == (3, "ready", "Lynx hunt snowshoe hares.")
    assert {revision for revision, _ in indexed(aws_backend, kb)} == {3}  # revision 2 never reached the index
    assert text_revisions(aws_backend, kb) == {3}
