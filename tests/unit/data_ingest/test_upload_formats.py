"""S3 uploads on the AWS ingest queue are extracted like the CLI's files (HTML main text, DOCX, PDF)."""

from __future__ import annotations

import json
from urllib.parse import quote_plus

import pytest

from agentkb.services.ingest.queue import PoisonMessage, parse_message
from tests.unit.data_ingest.docfiles import docx_bytes, pdf_bytes


def notification(key: str) -> str:
    return json.dumps({"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
                                    "s3": {"bucket": {"name": "b"}, "object": {"key": quote_plus(key)}}}]})


@pytest.mark.parametrize(("name", "data", "text"), [
    ("page.html", b"<nav>menu</nav><main><h1>Refunds</h1><p>Five days.</p></main>", "# Refunds\n\nFive days."),
    ("guide.docx", docx_bytes([("Heading1", "Refunds"), ("", "Five days.")]), "# Refunds\n\nFive days."),
    ("guide.pdf", pdf_bytes(["Refunds take five days."]), "Refunds take five days."),
    ("notes", b"plain text without a suffix", "plain text without a suffix"),
])
def test_uploads_are_extracted_by_format(name: str, data: bytes, text: str) -> None:
    [queued] = parse_message(notification(f"uploads/ws/kb/{name}"), lambda bucket, key: data)
    assert (queued.knowledge_base_id, queued.request.name, queued.request.content) == ("kb", name, text)


def test_an_unreadable_upload_is_a_poison_message_with_the_reason() -> None:
    with pytest.raises(PoisonMessage, match="Unreadable upload: PDF has no text layer"):
        parse_message(notification("uploads/ws/kb/scan.pdf"), lambda bucket, key: pdf_bytes([""]))
