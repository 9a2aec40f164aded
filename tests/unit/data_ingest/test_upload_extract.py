"""services/extract/upload.py: an uploaded file's format (suffix, else media type), its base64, its refusals."""

from __future__ import annotations

import base64

import pytest

from agentkb.errors import BadRequest, Unprocessable, UnsupportedMediaType
from agentkb.services.extract.upload import decode_base64, extract_upload, upload_suffix
from tests.unit.data_ingest.docfiles import pdf_bytes


def test_the_suffix_decides_and_the_media_type_only_without_one() -> None:
    assert upload_suffix("guides/Setup.PDF", None) == ".pdf"
    assert upload_suffix("notes.markdown", "application/pdf") == ".markdown"
    assert upload_suffix("README", "text/markdown; charset=utf-8") == ".md"
    for name, media in (("tool.exe", "application/pdf"), ("README", None), ("README", "image/png")):
        with pytest.raises(UnsupportedMediaType):
            upload_suffix(name, media)


def test_base64_is_strict() -> None:
    assert decode_base64(base64.b64encode(b"hi").decode()) == b"hi"
    for bad in ("***", "aGk", "aGk=\n!"):
        with pytest.raises(BadRequest):
            decode_base64(bad)


def test_a_pdf_keeps_its_pages_and_a_broken_one_is_unprocessable() -> None:
    found = extract_upload("m.pdf", base64.b64encode(pdf_bytes(["one", "two"])).decode())
    assert found.text == "one\n\ntwo" and found.page_starts == (0, 5)
    with pytest.raises(Unprocessable, match="unreadable PDF|no text"):
        extract_upload("m.pdf", base64.b64encode(b"%PDF-1.4 cut").decode())
