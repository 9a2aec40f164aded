"""POST /api/v2/knowledge/bases/{kb}/uploads on the embedded engine, the statuses the contract suite leaves out:
413 over the body limit (a 1.5 MB file fits), 202 for a long text (indexed in the background), 422 from a KB
that refuses secrets, 401 without a key, and the 415 of a non-JSON body."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import pytest

from agentkb.api.functions import ingest_app
from agentkb.api.routes.ingest import ingest_deps
from agentkb.composition import get_ports
from agentkb.local.indexing_worker import drain
from tests.handlers.test_background_indexing import TEXT
from tests.handlers.test_document_secrets import AWS_SECRET, LEAKY
from tests.helpers import body_of, invoke, rest_event

BASES = "/api/v2/knowledge/bases"


@pytest.fixture()
def small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    def small(ports: Any) -> Any:  # as tests/handlers/test_background_indexing.py: 202 above 200 characters
        return replace(ingest_deps(ports), sync_max_chars=200)

    monkeypatch.setitem(ingest_app().dependency_overrides, ingest_deps, small)


def call(path: str, key: str | None, body: Any, **kw: Any) -> tuple[int, Any]:
    event = rest_event("POST", path, body, key=key, **kw)
    response = invoke("ingest", event)
    return response["statusCode"], body_of(response)


def _kb(key: str, **extra: Any) -> str:
    status, kb = call(BASES, key, {"workspaceId": "ws1", "name": "files", **extra})
    assert status == 201, kb
    return str(kb["data"]["id"])


def upload(name: str, data: bytes) -> dict[str, Any]:
    return {"workspaceId": "ws1", "name": name, "contentBase64": base64.b64encode(data).decode()}


def test_the_body_limit_is_a_413_and_a_file_of_about_1_5_mb_fits(rw_key: str) -> None:
    kb = _kb(rw_key)
    line = b"The relay station logs every handover between the valley and the ridge.\n"
    fits = line * (1_400_000 // len(line))
    status, body = call(f"{BASES}/{kb}/uploads", rw_key, upload("log.txt", fits))
    assert status in (201, 202), body
    status, body = call(f"{BASES}/{kb}/uploads", rw_key, upload("log.txt", line * (1_700_000 // len(line))))
    assert (status, body["error"]["code"]) == (413, "PAYLOAD_TOO_LARGE")


@pytest.mark.usefixtures("small_limit")
def test_a_long_text_is_accepted_and_indexed_in_the_background(rw_key: str) -> None:
    kb = _kb(rw_key)
    status, accepted = call(f"{BASES}/{kb}/uploads", rw_key, upload("ferries.md", TEXT.encode()))
    assert (status, accepted["data"]["status"]) == (202, "indexing")
    assert drain(get_ports()) == 1
    response = invoke("ingest", rest_event("GET", f"{BASES}/{kb}/documents/{accepted['data']['id']}", key=rw_key,
                                           query={"workspaceId": "ws1"}))
    assert body_of(response)["data"]["status"] == "ready"


def test_a_refusing_kb_answers_422_and_no_key_401_and_a_non_json_body_415(rw_key: str) -> None:
    kb = _kb(rw_key, secretPolicy="refuse")
    status, body = call(f"{BASES}/{kb}/uploads", rw_key, upload("deploy.md", LEAKY.encode()))
    assert (status, body["error"]["code"]) == (422, "UNPROCESSABLE")
    assert body["error"]["details"]["reason"] == "secret_detected" and AWS_SECRET not in json.dumps(body)
    status, body = call(f"{BASES}/{kb}/uploads", None, upload("a.md", b"text"))
    assert (status, body["error"]["code"]) == (401, "UNAUTHORIZED")
    status, body = call(f"{BASES}/{kb}/uploads", rw_key, None, raw_body="name=a.md",
                        headers={"Content-Type": "text/plain"})
    assert (status, body["error"]["code"]) == (415, "UNSUPPORTED_MEDIA_TYPE")
