"""A file uploaded through the API (`POST .../uploads`): base64 decoded, its format found by the name's suffix (or
the media type when the name has none), and its text extracted by the same extractors `agentkb ingest` uses,
a PDF's page offsets kept. Each refusal is the error the route answers: 400 undecodable, 415 a format agentkb does
not read, 422 a file of a known format that yields no text."""

from __future__ import annotations

import base64
import binascii

from agentkb.errors import BadRequest, Unprocessable, UnsupportedMediaType
from agentkb.services.extract.files import SUFFIXES, ExtractedText, Unreadable, extract

MEDIA_TYPES = {"text/markdown": ".md", "text/x-markdown": ".md", "text/plain": ".txt", "text/html": ".html",
               "application/pdf": ".pdf",
               "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ".docx"}


def upload_suffix(name: str, media_type: str | None) -> str:
    """The format of an upload: its name's suffix when agentkb reads it, else its media type's; else a 415."""
    lowered = name.lower()
    for suffix in SUFFIXES:
        if lowered.endswith(suffix):
            return suffix
    by_type = MEDIA_TYPES.get((media_type or "").split(";", 1)[0].strip().lower())
    if by_type and "." not in lowered.rsplit("/", 1)[-1]:
        return by_type
    raise UnsupportedMediaType(f"agentkb reads {', '.join(SUFFIXES)} files", details={
        "reason": "unsupported_format", "supported": list(SUFFIXES)})


def decode_base64(content: str) -> bytes:
    try:
        return base64.b64decode(content, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest("contentBase64 is not base64", details=[
            {"path": "contentBase64", "message": "not base64 (RFC 4648, standard alphabet, padded)"}]) from exc


def extract_upload(name: str, content_base64: str, media_type: str | None = None) -> ExtractedText:
    """The text of an uploaded file (with a PDF's page starts)."""
    suffix = upload_suffix(name, media_type)
    data = decode_base64(content_base64)
    try:
        return extract(f"upload{suffix}", data)
    except Unreadable as exc:
        raise Unprocessable(f"The file yields no text: {exc}", details={"reason": "unreadable_file",
                                                                        "detail": str(exc)}) from exc
