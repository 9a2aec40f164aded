"""`POST .../uploads` (addDocumentFile) on both engines, through the real ingest handler: a PDF's text extracted on
the server with its pages kept (listDocumentChunks shows them), the other formats as `agentkb ingest` reads them,
revisions and conflicts as the document create route, and the same refusals."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from port_engines import EnginePorts

from tests.helpers import body_of, invoke, mint, rest_event
from tests.unit.data_ingest.docfiles import docx_bytes, pdf_bytes

BASES = "/api/v2/knowledge/bases"
PAGES = ["Installation needs a license key from the portal.", "Backups are kept for thirty days."]


def call(method: str, path: str, key: str, body: Any = None, **query: str) -> tuple[int, Any]:
    response = invoke("ingest", rest_event(method, path, body, key=key, query=query or None))
    return response["statusCode"], body_of(response) if response.get("body") else None


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _kb(key: str) -> str:
    status, kb = call("POST", BASES, key, {"workspaceId": "ws1", "name": "manuals"})
    assert status == 201, kb
    return str(kb["data"]["id"])


def test_a_pdf_upload_is_extracted_with_its_pages(ports: EnginePorts) -> None:
    key = mint(ports.bundle, ["ws1"], ["api:read", "api:write"])
    kb = _kb(key)
    status, doc = call("POST", f"{BASES}/{kb}/uploads", key, {"workspaceId": "ws1", "name": "ops/manual.pdf",
                                                             "contentBase64": b64(pdf_bytes(PAGES))})
    assert status == 201, doc
    assert (doc["data"]["name"], doc["data"]["revision"]) == ("ops/manual.pdf", 1)
    _, detail = call("GET", f"{BASES}/{kb}/documents/{doc['data']['id']}", key, workspaceId="ws1")
    assert detail["data"]["status"] == "ready" and PAGES[1] in detail["data"]["content"]
    _, chunks = call("GET", f"{BASES}/{kb}/documents/{doc['data']['id']}/chunks", key, workspaceId="ws1")
    assert [p for c in chunks["data"] for p in c["pages"]] == [1, 2]
    # the same name again at revision 0 is a conflict naming the current revision; at 1 it replaces it
    body = {"workspaceId": "ws1", "name": "ops/manual.pdf", "contentBase64": b64(pdf_bytes(PAGES[:1]))}
    status, conflict = call("POST", f"{BASES}/{kb}/uploads", key, {**body, "expectedRevision": 0})
    assert (status, conflict["error"]["details"]["currentRevision"]) == (409, 1)
    status, replaced = call("POST", f"{BASES}/{kb}/uploads", key, {**body, "expectedRevision": 1})
    assert (status, replaced["data"]["revision"]) == (201, 2)


def test_every_format_of_agentkb_ingest_is_read(ports: EnginePorts) -> None:
    key = mint(ports.bundle, ["ws1"], ["api:read", "api:write"])
    kb = _kb(key)
    files = {"notes.md": b"# Notes\n\nThe gauge reads forty.", "plain.txt": "Caf\u00e9 hours: nine to five.".encode(),
             "page.html": b"<html><body><nav>menu</nav><main><h1>Guide</h1><p>Open the valve.</p></main></body></html>",
             "memo.docx": docx_bytes([("Heading1", "Memo"), ("", "Rotate the keys monthly.")])}
    for name, data in files.items():
        status, doc = call("POST", f"{BASES}/{kb}/uploads", key, {"workspaceId": "ws1", "name": name,
                                                                 "contentBase64": b64(data)})
        assert status == 201, (name, doc)
    texts = {}
    for name in files:
        _, listed = call("GET", f"{BASES}/{kb}/documents", key, workspaceId="ws1")
        doc_id = next(d["id"] for d in listed["data"] if d["name"] == name)
        texts[name] = call("GET", f"{BASES}/{kb}/documents/{doc_id}", key, workspaceId="ws1")[1]["data"]["content"]
    assert "menu" not in texts["page.html"] and "# Guide" in texts["page.html"]
    assert "Rotate the keys monthly." in texts["memo.docx"] and texts["plain.txt"].startswith("Caf\u00e9")
    # a name without a suffix takes its format from the media type
    status, doc = call("POST", f"{BASES}/{kb}/uploads", key, {"workspaceId": "ws1", "name": "README",
                                                             "contentType": "text/markdown; charset=utf-8",
                                                             "contentBase64": b64(b"# Readme\n\nHello there.")})
    assert status == 201, doc


def test_refusals_use_the_error_envelope(ports: EnginePorts) -> None:
    key = mint(ports.bundle, ["ws1"], ["api:read", "api:write"])
    reader = mint(ports.bundle, ["ws1"], ["api:read"])
    kb = _kb(key)
    uploads = f"{BASES}/{kb}/uploads"
    good = {"workspaceId": "ws1", "name": "a.md", "contentBase64": b64(b"Some text.")}
    for body, status, code in (
            ({**good, "name": "tool.exe"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
            ({**good, "name": "README", "contentType": "application/zip"}, 415, "UNSUPPORTED_MEDIA_TYPE"),
            ({**good, "contentBase64": "not base64!"}, 400, "BAD_REQUEST"),
            ({"workspaceId": "ws1", "name": "a.md"}, 400, "BAD_REQUEST"),
            ({**good, "name": "broken.pdf", "contentBase64": b64(b"%PDF-1.4 truncated")}, 422, "UNPROCESSABLE"),
            ({**good, "name": "latin.txt", "contentBase64": b64("caf\u00e9".encode("latin-1"))}, 422, "UNPROCESSABLE"),
            ({**good, "workspaceId": "ws2"}, 404, "NOT_FOUND")):
        answer, payload = call("POST", uploads, key, body)
        assert (answer, payload["error"]["code"]) == (status, code), (body.get("name"), payload)
    assert call("POST", f"{BASES}/nope/uploads", key, good)[1]["error"]["code"] == "NOT_FOUND"
    assert call("POST", uploads, reader, good)[0] == 403
    assert call("GET", f"{BASES}/{kb}/documents", key, workspaceId="ws1")[1]["data"] == []  # nothing stored


def _drain(ports: EnginePorts, request: pytest.FixtureRequest) -> int:
    """Index what the upload queued: the embedded server's worker, or the ingest queue's consumer on AWS."""
    if ports.engine == "embedded":
        from agentkb.local.indexing_worker import drain

        return drain(ports.bundle)
    from tests.handlers.aws.test_aws_management import _drain_queue

    return _drain_queue(request.getfixturevalue("aws_backend"))


def test_a_long_pdf_indexed_in_the_background_keeps_its_pages(ports: EnginePorts,
                                                               request: pytest.FixtureRequest) -> None:
    key = mint(ports.bundle, ["ws1"], ["api:read", "api:write"])
    kb = _kb(key)
    topics = ("lighthouse lamp", "harbour crane", "tide gauge")
    long_pages = [" ".join(f"The {t} check {i} is logged by the keeper." for i in range(280)) for t in topics]
    assert sum(map(len, long_pages)) > 32_000  # over the 201 limit: indexed in the background
    status, doc = call("POST", f"{BASES}/{kb}/uploads", key, {"workspaceId": "ws1", "name": "log.pdf",
                                                             "contentBase64": b64(pdf_bytes(long_pages))})
    assert (status, doc["data"]["status"]) == (202, "indexing"), doc
    assert _drain(ports, request) == 1
    _, detail = call("GET", f"{BASES}/{kb}/documents/{doc['data']['id']}", key, workspaceId="ws1")
    assert detail["data"]["status"] == "ready"
    _, chunks = call("GET", f"{BASES}/{kb}/documents/{doc['data']['id']}/chunks", key, workspaceId="ws1",
                     limit="200")
    pages = [c["pages"] for c in chunks["data"]]
    assert all(pages) and pages[0][0] == 1 and pages[-1][-1] == 3
    # the first chunk naming each page's topic ends on that page (it may start on the page before)
    first_of = {t: next(c["pages"] for c in chunks["data"] if t in c["content"]) for t in topics}
    assert {t: p[-1] for t, p in first_of.items()} == {"lighthouse lamp": 1, "harbour crane": 2, "tide gauge": 3}
