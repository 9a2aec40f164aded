"""PDF -> the text layer, page by page (pypdf: pure Python, imported only when a PDF arrives)."""

from __future__ import annotations

import io
import logging

from agentkb.services.extract.text import Unreadable

PAGE_SEPARATOR = "\n\n"


def pdf_text(data: bytes) -> tuple[str, tuple[int, ...]]:
    """(text, offset where each page starts). Scanned PDFs (no text layer) and locked ones are Unreadable."""
    try:
        from pypdf import PdfReader
    except ImportError as exc:  # the `local` extra (or the ingest bundle) brings pypdf
        raise Unreadable("PDF support is not installed (pip install 'agentkb[local]')") from exc
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed-but-readable files warn per object
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted PDF")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except Unreadable:
        raise
    except Exception as exc:  # an untrusted file: whatever the parser trips on, the file is unreadable, not the run
        raise Unreadable(f"unreadable PDF ({type(exc).__name__})") from exc
    if not any(pages):
        raise Unreadable("PDF has no text layer (scanned images need OCR)")
    starts: list[int] = []
    position = 0
    for text in pages:
        starts.append(position)
        position += len(text) + len(PAGE_SEPARATOR)
    return PAGE_SEPARATOR.join(pages), tuple(starts)
