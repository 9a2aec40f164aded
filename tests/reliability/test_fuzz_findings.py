"""Regression tests for what the full fuzz run (`make fuzz`, 500 examples) found, and for the same bug elsewhere.

1. `'³'.isdigit()` is True but `int('³')` raises: an OB1 usage report naming memory id '³' answered 500. Every
   `isdigit()` that guards an `int()` now also requires ASCII: usage reports, OB1 memory ids in paths, /v1/memories
   cursors, the gate's Content-Length, DOCX outline levels.
2. `POST /v1/graph` answered an undocumented 409 (an entity of the same kind and identity key under another id).
"""

from __future__ import annotations

import base64
import io
import zipfile
from typing import Any

from agentkb.api.routers import openapi_document
from agentkb.composition import Ports
from agentkb.services.extract.docx import docx_text
from tests.helpers import ERROR_RESPONSE, body_of, mint, rest_event
from tests.ob1_client import Ob1Client, recall_payload, writeback_payload
from tests.reliability.corpus import replay

SUPERSCRIPTS = ["³", "²", "1²", "٣"]  # digits to str.isdigit(); int() refuses the first three, reads the last as 3


def test_a_usage_report_naming_non_ascii_digit_ids_is_answered_not_a_500(bundle: Ports) -> None:
    client = Ob1Client(mint(bundle, ["fz"], ["api:read", "api:write"], "agent"))
    client.ok("POST", "/writeback", writeback_payload("fz", "r1"))
    recalled = client.ok("POST", "/recall", recall_payload("fz", "r1", include_unconfirmed=True))
    report = {"used_memory_ids": SUPERSCRIPTS, "ignored": [{"memory_id": m, "reason": "x"} for m in SUPERSCRIPTS]}
    status, body, _ = client.call("POST", f"/recall/{recalled['request_id']}/usage", report)
    assert status == 200 and body == {"ok": True, "recorded": 0}, body  # ids recall never returned count for nothing


def test_ob1_memory_ids_that_are_not_ascii_digits_are_404(bundle: Ports) -> None:
    client = Ob1Client(mint(bundle, ["fz"], ["api:read", "api:write"], "agent"))
    for raw in SUPERSCRIPTS:
        status, body, _ = client.call("GET", f"/memories/{raw}")
        assert status == 404, body
        ERROR_RESPONSE.validate(body)
        status, body, _ = client.call("PATCH", f"/memories/{raw}/review", {"action": "confirm"})
        assert status == 404, body


def test_a_memory_list_cursor_with_non_ascii_digits_is_400(bundle: Ports) -> None:
    key = mint(bundle, ["fz"], ["api:read"], "reader")
    for raw in SUPERSCRIPTS[:3]:
        cursor = base64.urlsafe_b64encode(f"m:{raw}".encode()).decode()
        response = replay(rest_event("GET", "/v1/memories", query={"workspace_id": "fz", "cursor": cursor}, key=key,
                                     resource="/v1/memories"))
        assert response["statusCode"] == 400, body_of(response)
        assert body_of(response)["error"]["code"] == "BAD_REQUEST"


def test_a_non_ascii_content_length_is_not_a_500(bundle: Ports) -> None:
    key = mint(bundle, ["fz"], ["api:read", "api:write"], "agent")
    for raw in SUPERSCRIPTS:
        event = rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "fz", "name": f"kb {raw}"}, key=key,
                           headers={"Content-Length": raw})
        response = replay(event)
        assert response["statusCode"] == 201, body_of(response)


def test_a_docx_outline_level_that_is_not_an_ascii_digit_is_body_text() -> None:
    ns = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    paragraph = '<w:p><w:pPr><w:outlineLvl w:val="²"/></w:pPr><w:r><w:t>Overview</w:t></w:r></w:p>'
    xml = f'<?xml version="1.0"?><w:document xmlns:w="{ns}"><w:body>{paragraph}</w:body></w:document>'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", xml)
    assert docx_text(out.getvalue()).strip() == "Overview"


def test_a_graph_identity_clash_is_a_documented_409(bundle: Ports) -> None:
    assert "409" in openapi_document()["paths"]["/v1/graph"]["post"]["responses"]
    key = mint(bundle, ["fz"], ["api:read", "api:write"], "agent")

    def entity(entity_id: str) -> dict[str, Any]:
        return {"id": entity_id, "kind": "service", "label": "billing", "attributes": {}, "proofIds": [],
                "identity": {"key": "billing", "scope": "workspace", "aliases": [], "fingerprint": "0" * 64}}

    first = replay(rest_event("POST", "/v1/graph", {"workspaceId": "fz", "entities": [entity("svc:a")],
                                                    "relations": [], "proofs": []}, key=key))
    assert first["statusCode"] == 200, body_of(first)
    clash = replay(rest_event("POST", "/v1/graph", {"workspaceId": "fz", "entities": [entity("svc:b")],
                                                    "relations": [], "proofs": []}, key=key))
    assert clash["statusCode"] == 409, body_of(clash)
    ERROR_RESPONSE.validate(body_of(clash))
