"""The write path through the ingest lambda_handler: KBs, tags, documents, atomicity, deletes."""

from __future__ import annotations

from typing import Any

import pytest

from agentkb.composition import Ports
from tests.handlers.test_search_handler import TAGS, add_doc, create_kb, search
from tests.helpers import ERROR_RESPONSE, body_of, embedded_db, invoke, rest_event


def test_create_kb_returns_profile_and_slots(rw_key: str) -> None:
    response = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", {
        "workspaceId": "ws1", "name": "kb", "description": "d", "tagDefinitions": TAGS}, key=rw_key))
    assert response["statusCode"] == 201
    data = body_of(response)["data"]
    assert data["embeddingModel"] == "sentence-transformers/all-MiniLM-L6-v2" and data["embeddingDimension"] == 384
    assert [t["slot"] for t in data["tagDefinitions"]] == ["text1", "number1", "date1", "boolean1"]
    tags = invoke("ingest", rest_event("GET", f"/api/v2/knowledge/bases/{data['id']}/tags", key=rw_key,
                                       query={"workspaceId": "ws1"}))
    assert tags["statusCode"] == 200 and body_of(tags)["data"] == data["tagDefinitions"]
    duplicate = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "ws1", "name": "kb"},
                                            key=rw_key))
    assert duplicate["statusCode"] == 409 and body_of(duplicate)["error"]["code"] == "CONFLICT"


@pytest.mark.parametrize("body", [
    {"workspaceId": "ws1", "name": "x", "embeddingModel": "other-model"},
    {"workspaceId": "ws1", "name": "x", "tagDefinitions": [{"tagName": "t", "fieldType": "blob"}]},
    {"workspaceId": "ws1", "name": "x", "tagDefinitions": [{"tagName": f"b{i}", "fieldType": "boolean"}
                                                          for i in range(4)]},
    {"workspaceId": "ws1", "name": ""}, {"workspaceId": "ws1", "name": "x", "bogus": 1},
])
def test_create_kb_rejections_write_nothing(rw_key: str, bundle: Ports, body: dict[str, Any]) -> None:
    response = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", body, key=rw_key))
    assert response["statusCode"] == 400, body_of(response)
    ERROR_RESPONSE.validate(body_of(response))
    assert bundle.catalog.list_knowledge_bases("ws1") == []


def test_read_only_key_cannot_write_and_other_workspace_is_404(ro_key: str, other_key: str, rw_key: str) -> None:
    body = {"workspaceId": "ws1", "name": "kb"}
    denied = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", body, key=ro_key))
    assert denied["statusCode"] == 403 and body_of(denied)["error"]["details"]["code"] == "INSUFFICIENT_SCOPE"
    assert invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", body, key=other_key))["statusCode"] == 404
    kb = create_kb(rw_key)
    tags = invoke("ingest", rest_event("GET", f"/api/v2/knowledge/bases/{kb}/tags", key=other_key,
                                       query={"workspaceId": "ws1"}))
    assert tags["statusCode"] == 404


def test_document_is_searchable_when_201_returns_and_gone_after_delete(rw_key: str) -> None:
    kb = create_kb(rw_key)
    doc = add_doc(rw_key, kb, "a.md", "Zebras migrate across the Serengeti every year.", {"priority": 4})
    assert doc["chunkCount"] == 1 and doc["tokenCount"] > 5 and len(doc["contentHash"]) == 64
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "zebra migration"})
    assert status == 200 and payload["data"]["results"][0]["documentId"] == doc["id"]
    delete = invoke("ingest", rest_event("DELETE", f"/api/v2/knowledge/bases/{kb}/documents/{doc['id']}",
                                         key=rw_key, query={"workspaceId": "ws1"}))
    assert delete["statusCode"] == 204
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "zebra migration"})
    assert payload["data"]["results"] == []
    again = invoke("ingest", rest_event("DELETE", f"/api/v2/knowledge/bases/{kb}/documents/{doc['id']}",
                                        key=rw_key, query={"workspaceId": "ws1"}))
    assert again["statusCode"] == 404


def test_same_name_replaces_and_unchanged_content_is_idempotent(rw_key: str) -> None:
    kb = create_kb(rw_key)
    first = add_doc(rw_key, kb, "a.md", "Version one talks about apples.")
    same = add_doc(rw_key, kb, "a.md", "Version one talks about apples.")
    assert same == first
    second = add_doc(rw_key, kb, "a.md", "Version two talks about oranges.")
    assert second["id"] == first["id"] and second["revision"] == 2
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "apples oranges"})
    assert [r["content"] for r in payload["data"]["results"]] == ["Version two talks about oranges."]


def test_bad_document_tags_are_400_and_write_nothing(rw_key: str, bundle: Ports) -> None:
    kb = create_kb(rw_key)
    for tags in ({"nope": 1}, {"priority": "high"}, {"updated": "yesterday"}):
        response = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents", {
            "workspaceId": "ws1", "name": "a.md", "content": "text", "tags": tags}, key=rw_key))
        assert response["statusCode"] == 400
    assert bundle.catalog.find_document_by_name(kb, "a.md") is None


def test_failed_ingest_leaves_nothing_half_indexed(rw_key: str, bundle: Ports,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    kb = create_kb(rw_key)
    original = type(embedded_db(bundle)).transaction

    def failing_write(self: Any, kb_obj: Any, document: Any, chunks: Any) -> None:
        with original(embedded_db(bundle)) as conn:  # fail after the first rows are written, inside the transaction
            conn.execute("DELETE FROM chunks WHERE document_id = ?", (document.id,))
            conn.execute("INSERT INTO documents (id, knowledge_base_id, workspace_id, name, content_hash, tags,"
                         " chunk_count, token_count, created_at) VALUES (?, ?, 'ws1', 'x', 'h', '{}', 1, 1, 't')",
                         (document.id, kb_obj.id))
            raise RuntimeError("disk on fire")

    monkeypatch.setattr(type(bundle.index), "write_document", failing_write)
    response = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents", {
        "workspaceId": "ws1", "name": "a.md", "content": "Some content to index."}, key=rw_key))
    assert response["statusCode"] == 500
    conn = embedded_db(bundle).connection()
    assert conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 0
    monkeypatch.undo()
    retry = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents", {
        "workspaceId": "ws1", "name": "a.md", "content": "Some content to index."}, key=rw_key))
    assert retry["statusCode"] == 201 and body_of(retry)["data"]["chunkCount"] == 1


def test_long_document_is_chunked_with_overlap(rw_key: str) -> None:
    kb = create_kb(rw_key)
    text = " ".join(f"Sentence number {i} talks about topic {i % 7}." for i in range(200))
    doc = add_doc(rw_key, kb, "long.md", text)
    assert doc["chunkCount"] > 5
    status, payload, _ = search(rw_key, {"workspaceId": "ws1", "knowledgeBaseIds": kb, "query": "Sentence number 150",
                                         "topK": 100})
    indexes = sorted(r["chunkIndex"] for r in payload["data"]["results"])
    assert indexes == list(range(doc["chunkCount"]))


def test_index_write_is_all_or_nothing(rw_key: str, bundle: Ports) -> None:
    import sqlite3

    from agentkb.models.domain import Chunk, Document, IndexQuery

    kb_id = create_kb(rw_key)
    kb = bundle.catalog.get_knowledge_base("ws1", kb_id)
    doc = Document("d1", kb_id, "ws1", "d.md", None, "h", {}, 2, 4, "t")
    vector = [0.0] * 384
    chunks = [Chunk("c1", "d1", 0, "first", 2, "h1", vector), Chunk("c1", "d1", 1, "dup id", 2, "h2", vector)]
    with pytest.raises(sqlite3.IntegrityError):
        bundle.index.write_document(kb, doc, chunks)  # the second chunk violates the unique chunk id
    conn = embedded_db(bundle).connection()
    assert conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM lexical_log").fetchone()[0] == 0  # the change log rolled back too
    assert bundle.index.lexical_search(IndexQuery("ws1", (kb_id,), text="first")) == []


def test_concurrent_writes_of_one_name_all_land(rw_key: str, bundle: Ports) -> None:
    """Writers racing on one document name: the loser of the race re-reads and replaces, nobody gets a 500."""
    from concurrent.futures import ThreadPoolExecutor

    kb = create_kb(rw_key)

    def write(i: int) -> int:
        response = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents", {
            "workspaceId": "ws1", "name": "race.md", "content": f"Version {i} of the racing document."}, key=rw_key))
        return int(response["statusCode"])

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(write, range(12)))
    assert statuses == [201] * 12
    conn = embedded_db(bundle).connection()
    assert conn.execute("SELECT COUNT(*) FROM documents WHERE name = 'race.md'").fetchone()[0] == 1
    (doc_id,) = conn.execute("SELECT id FROM documents WHERE name = 'race.md'").fetchone()
    assert {r[0] for r in conn.execute("SELECT document_id FROM chunks")} == {doc_id}


def test_concurrent_requests_never_see_each_other(bundle: Ports) -> None:
    """Fresh process state, many first requests at once: each answer belongs to its own request."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.helpers import mint

    keys = [mint(bundle, ["ws1"], ["api:read", "api:write"], f"p{i}") for i in range(16)]
    kb = create_kb(keys[0])

    def write(i: int) -> tuple[int, str]:
        response = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents", {
            "workspaceId": "ws1", "name": f"doc-{i}.md", "content": f"Document {i}."}, key=keys[i]))
        return int(response["statusCode"]), body_of(response)["data"]["name"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(write, range(16)))
    assert answers == [(201, f"doc-{i}.md") for i in range(16)]
    names = {r[0] for r in embedded_db(bundle).connection().execute("SELECT name FROM documents")}
    assert names == {f"doc-{i}.md" for i in range(16)}
