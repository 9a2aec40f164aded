"""`GET .../documents/{documentId}/chunks` (listDocumentChunks) on both engines, through the real ingest handler:
the chunks of the document's current revision by index, paged with the list cursor, pages of a PDF upload kept,
the text of a chunk with a detected secret withheld, and the same 404s and 400s."""

from __future__ import annotations

import random
import string
from typing import Any

from port_engines import EnginePorts

from tests.helpers import body_of, invoke, mint, rest_event

BASES = "/api/v2/knowledge/bases"
_rng = random.Random(28)
AWS_SECRET = "".join(_rng.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
SECTIONS = [f"## Section {i}\n\n" + " ".join(f"Step {i}.{j} of the rollout checks gauge {i * 10 + j}."
                                                 for j in range(40)) for i in range(4)]


def call(method: str, path: str, key: str, body: Any = None, **query: str) -> tuple[int, Any]:
    response = invoke("ingest", rest_event(method, path, body, key=key, query=query or None))
    return response["statusCode"], body_of(response) if response.get("body") else None


def _document(key: str, content: str) -> tuple[str, str]:
    status, kb = call("POST", BASES, key, {"workspaceId": "ws1", "name": "runbooks"})
    assert status == 201, kb
    status, doc = call("POST", f"{BASES}/{kb['data']['id']}/documents", key,
                       {"workspaceId": "ws1", "name": "rollout.md", "content": content})
    assert status == 201, doc
    return kb["data"]["id"], doc["data"]["id"]


def test_chunks_come_by_index_a_page_at_a_time(ports: EnginePorts) -> None:
    key = mint(ports.bundle, ["ws1"], ["api:read", "api:write"])
    kb, doc = _document(key, "# Rollout\n\n" + "\n\n".join(SECTIONS))
    _, detail = call("GET", f"{BASES}/{kb}/documents/{doc}", key, workspaceId="ws1")
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        status, page = call("GET", f"{BASES}/{kb}/documents/{doc}/chunks", key, workspaceId="ws1", limit="2",
                            **({"cursor": cursor} if cursor else {}))
        assert status == 200, page
        assert len(page["data"]) <= 2
        seen += page["data"]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert [c["chunkIndex"] for c in seen] == list(range(detail["data"]["chunkCount"])) and len(seen) > 2
    assert sum(c["tokenCount"] for c in seen) == detail["data"]["tokenCount"]
    assert all(c["pages"] is None and c["secret"] is False and c["content"] for c in seen)
    assert "Step 2.5 of the rollout" in " ".join(c["content"] for c in seen)


def test_a_chunk_with_a_secret_has_its_text_withheld(ports: EnginePorts) -> None:
    key = mint(ports.bundle, ["ws1"], ["api:read", "api:write"])
    kb, doc = _document(key, f"Deploy notes for the billing sync.\n\nsecret_access_key = {AWS_SECRET}\n")
    status, page = call("GET", f"{BASES}/{kb}/documents/{doc}/chunks", key, workspaceId="ws1")
    assert status == 200, page
    [chunk] = page["data"]
    assert (chunk["secret"], chunk["content"]) == (True, "")
    assert AWS_SECRET not in str(page)


def test_missing_and_unreachable_documents_and_bad_cursors(ports: EnginePorts) -> None:
    key = mint(ports.bundle, ["ws1"], ["api:read", "api:write"])
    other = mint(ports.bundle, ["ws2"], ["api:read"])
    kb, doc = _document(key, "A short note about gauges.")
    chunks = f"{BASES}/{kb}/documents/{doc}/chunks"
    assert call("GET", f"{BASES}/{kb}/documents/nope/chunks", key, workspaceId="ws1")[0] == 404
    assert call("GET", f"{BASES}/nope/documents/{doc}/chunks", key, workspaceId="ws1")[0] == 404
    status, body = call("GET", chunks, other, workspaceId="ws1")
    assert (status, body["error"]["code"]) == (404, "NOT_FOUND")
    for query in ({"limit": "0"}, {"limit": "201"}, {"cursor": "not-a-cursor!"}, {"cursor": "WyJhIiwiYiJd"}):
        status, body = call("GET", chunks, key, workspaceId="ws1", **query)
        assert (status, body["error"]["code"]) == (400, "BAD_REQUEST"), query
    assert call("GET", chunks, key)[0] == 400  # workspaceId is required
