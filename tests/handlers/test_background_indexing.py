"""202 for big documents: stored as `indexing`, indexed by the worker (also after a restart), then `ready`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from agentkb.api.functions import ingest_app
from agentkb.api.routes.ingest import ingest_deps
from agentkb.composition import get_ports, reset_ports
from agentkb.local.indexing_worker import drain
from tests.helpers import body_of, invoke, rest_event

BASES = "/api/v2/knowledge/bases"


@pytest.fixture()
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    def small(ports: Any) -> Any:  # called with the resolved bundle, like the provider it replaces
        return replace(ingest_deps(ports), sync_max_chars=200)

    monkeypatch.setitem(ingest_app().dependency_overrides, ingest_deps, small)


def call(method: str, path: str, key: str, body: Any = None, **query: str) -> tuple[int, Any]:
    function = "search" if path.endswith("/search") else "ingest"
    response = invoke(function, rest_event(method, path, body, key=key, query=query or None))
    return response["statusCode"], body_of(response) if response.get("body") else None


def search(key: str, kb: str, query: str) -> list[str]:
    status, body = call("POST", "/api/v2/knowledge/search", key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb],
                                                                  "query": query})
    assert status == 200, body
    return [r["documentName"] for r in body["data"]["results"]]


TEXT = " ".join(f"The ferry to island {i} leaves at {i % 12 + 1} o'clock from pier {i % 5}." for i in range(20))


def test_a_big_document_is_accepted_then_indexed_in_the_background(rw_key: str, small_limit: None) -> None:
    _, created = call("POST", BASES, rw_key, {"workspaceId": "ws1", "name": "kb"})
    kb = created["data"]["id"]
    status, accepted = call("POST", f"{BASES}/{kb}/documents", rw_key, {"workspaceId": "ws1", "name": "ferries.md",
                                                                       "content": TEXT})
    assert status == 202 and accepted["data"]["status"] == "indexing"
    doc_id = accepted["data"]["id"]
    status, shown = call("GET", f"{BASES}/{kb}/documents/{doc_id}", rw_key, workspaceId="ws1")
    assert (shown["data"]["status"], shown["data"]["content"], shown["data"]["chunkCount"]) == ("indexing", TEXT, 0)
    assert search(rw_key, kb, "ferry island pier") == []  # not searchable yet: 202 never claims it is
    # Given a restart: a new process (bundle) on the same data directory finds the queued work
    reset_ports()
    assert drain(get_ports()) == 1
    status, shown = call("GET", f"{BASES}/{kb}/documents/{doc_id}", rw_key, workspaceId="ws1")
    assert shown["data"]["status"] == "ready" and shown["data"]["chunkCount"] >= 2 and shown["data"]["revision"] == 1
    assert search(rw_key, kb, "ferry island pier")[0] == "ferries.md"
    assert drain(get_ports()) == 0  # nothing left, nothing done twice
    # the same text again is unchanged (201, no new revision); small documents stay synchronous
    status, again = call("POST", f"{BASES}/{kb}/documents", rw_key, {"workspaceId": "ws1", "name": "ferries.md",
                                                                    "content": TEXT})
    assert status == 201 and again["data"]["revision"] == 1
    assert call("POST", f"{BASES}/{kb}/documents", rw_key, {"workspaceId": "ws1", "name": "s.md",
                                                            "content": "short"})[0] == 201


def test_a_document_that_cannot_be_indexed_fails_with_the_reason(rw_key: str, small_limit: None) -> None:
    _, created = call("POST", BASES, rw_key, {"workspaceId": "ws1", "name": "kb"})
    kb = created["data"]["id"]
    status, accepted = call("POST", f"{BASES}/{kb}/documents", rw_key, {"workspaceId": "ws1", "name": "blank.md",
                                                                       "content": " " * 500})
    assert status == 202
    assert drain(get_ports()) == 0
    status, shown = call("GET", f"{BASES}/{kb}/documents/{accepted['data']['id']}", rw_key, workspaceId="ws1")
    assert shown["data"]["status"] == "failed" and shown["data"]["error"] == "The document has no text"
    assert get_ports().indexing_queue.pending() == []
