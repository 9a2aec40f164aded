"""Management routes: list/show/delete knowledge bases, paged document lists, document status and text."""

from __future__ import annotations

from typing import Any

from agentkb.composition import Ports
from tests.helpers import body_of, invoke, rest_event

BASES = "/api/v2/knowledge/bases"


def call(method: str, path: str, key: str, body: Any = None, **query: str) -> tuple[int, Any]:
    response = invoke("ingest" if not path.endswith("/search") else "search",
                      rest_event(method, path, body, key=key, query=query or None))
    return response["statusCode"], body_of(response) if response.get("body") else None


def make_kb(key: str, name: str, workspace: str = "ws1") -> str:
    status, body = call("POST", BASES, key, {"workspaceId": workspace, "name": name})
    assert status == 201, body
    return str(body["data"]["id"])


def add(key: str, kb: str, name: str, content: str) -> str:
    status, body = call("POST", f"{BASES}/{kb}/documents", key, {"workspaceId": "ws1", "name": name,
                                                                 "content": content})
    assert status == 201, body
    return str(body["data"]["id"])


def test_knowledge_bases_are_listed_in_pages_and_shown(rw_key: str, other_key: str) -> None:
    ids = {make_kb(rw_key, f"kb-{i}"): f"kb-{i}" for i in range(5)}
    seen: list[str] = []
    cursor = None
    while True:
        status, page = call("GET", BASES, rw_key, workspaceId="ws1", limit="2", **({"cursor": cursor} if cursor
                                                                                  else {}))
        assert status == 200 and len(page["data"]) <= 2
        seen += [kb["name"] for kb in page["data"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == sorted(ids.values())
    kb_id = next(iter(ids))
    status, shown = call("GET", f"{BASES}/{kb_id}", rw_key, workspaceId="ws1")
    assert status == 200 and shown["data"]["name"] == ids[kb_id]
    # another workspace's key sees nothing, exactly like a missing KB
    assert call("GET", f"{BASES}/{kb_id}", other_key, workspaceId="ws1")[0] == 404
    assert call("GET", BASES, other_key, workspaceId="ws1")[0] == 404


def test_documents_are_paged_with_status_and_text(rw_key: str) -> None:
    kb = make_kb(rw_key, "docs")
    ids = [add(rw_key, kb, f"doc-{i:02d}.md", f"Document number {i} talks about topic {i}.") for i in range(5)]
    status, first = call("GET", f"{BASES}/{kb}/documents", rw_key, workspaceId="ws1", limit="3")
    assert status == 200 and [d["name"] for d in first["data"]] == ["doc-00.md", "doc-01.md", "doc-02.md"]
    assert all(d["status"] == "ready" and d["chunkCount"] == 1 and "content" not in d for d in first["data"])
    _, second = call("GET", f"{BASES}/{kb}/documents", rw_key, workspaceId="ws1", limit="3",
                     cursor=first["nextCursor"])
    assert [d["name"] for d in second["data"]] == ["doc-03.md", "doc-04.md"] and second["nextCursor"] is None
    status, doc = call("GET", f"{BASES}/{kb}/documents/{ids[3]}", rw_key, workspaceId="ws1")
    assert status == 200
    assert doc["data"] | {"createdAt": "t", "contentHash": "h"} == {
        "id": ids[3], "knowledgeBaseId": kb, "name": "doc-03.md", "sourceUrl": None, "sourcePath": None, "tags": {},
        "chunkCount": 1, "tokenCount": doc["data"]["tokenCount"], "contentHash": "h", "revision": 1,
        "status": "ready", "createdAt": "t", "content": "Document number 3 talks about topic 3.", "secretChunks": []}


def test_bad_paging_is_a_400_that_changes_nothing(rw_key: str) -> None:
    kb = make_kb(rw_key, "docs")
    for query in ({"limit": "0"}, {"limit": "201"}, {"cursor": "not-a-cursor!"}, {"cursor": "WzFd"}):
        status, body = call("GET", f"{BASES}/{kb}/documents", rw_key, workspaceId="ws1", **query)
        assert status == 400 and body["error"]["code"] == "BAD_REQUEST", (query, body)


def test_deleting_a_knowledge_base_removes_everything_and_search_answers_404(rw_key: str, ro_key: str,
                                                                             bundle: Ports) -> None:
    kb = make_kb(rw_key, "doomed")
    keep = make_kb(rw_key, "kept")
    doc = add(rw_key, kb, "a.md", "The doomed knowledge base holds this sentence.")
    add(rw_key, keep, "b.md", "The kept knowledge base holds this other sentence.")
    assert call("DELETE", f"{BASES}/{kb}", ro_key, workspaceId="ws1")[0] == 403  # a write
    assert call("DELETE", f"{BASES}/{kb}", rw_key, workspaceId="ws1")[0] == 204
    assert call("GET", f"{BASES}/{kb}", rw_key, workspaceId="ws1")[0] == 404
    assert call("GET", f"{BASES}/{kb}/documents/{doc}", rw_key, workspaceId="ws1")[0] == 404
    status, body = call("POST", "/api/v2/knowledge/search", rw_key,
                        {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "doomed sentence"})
    assert status == 404 and body["error"]["code"] == "NOT_FOUND"
    conn = bundle.builder.database.connection()
    assert conn.execute("SELECT count(*) FROM chunks WHERE knowledge_base_id = ?", (kb,)).fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM documents WHERE knowledge_base_id = ?", (kb,)).fetchone()[0] == 0
    assert bundle.index.lexical.search_chunks(kb, "doomed", 10) == []  # BM25 entries went too
    status, found = call("POST", "/api/v2/knowledge/search", rw_key,
                         {"workspaceId": "ws1", "knowledgeBaseIds": [keep], "query": "sentence"})
    assert status == 200 and found["data"]["results"][0]["documentName"] == "b.md"
    assert call("DELETE", f"{BASES}/{kb}", rw_key, workspaceId="ws1")[0] == 404
