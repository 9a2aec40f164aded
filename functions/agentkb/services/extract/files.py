"""Text out of files: Markdown and plain text, HTML (main text only), PDF (text layer, pages kept) and DOCX.

Pure functions of (file name, bytes): the CLI reads files, the ingest queue reads uploads. Headings come out
Markdown-style (`# Title`) so that chunking can carry them with their chunks. Parsers load lazily (pypdf only
when a PDF arrives), so a function that never extracts never pays for them.
"""

from __future__ import annotations

from agentkb.services.extract.text import ExtractedText, Unreadable

__all__ = ["MAX_FILE_BYTES", "SUFFIXES", "TEXT_SUFFIXES", "ExtractedText", "Unreadable", "extract", "supported"]

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
SUFFIXES = (*TEXT_SUFFIXES, ".html", ".htm", ".pdf", ".docx")
MAX_FILE_BYTES = 64 * 1024 * 1024


def supported(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def extract(name: str, data: bytes) -> ExtractedText:
    """The text of a file by its suffix; Unreadable (with the reason) when there is none."""
    lowered = name.lower()
    if not lowered.endswith(SUFFIXES):
        raise Unreadable(f"unsupported format ({'.' + lowered.rsplit('.', 1)[-1] if '.' in lowered else 'no suffix'})")
    if len(data) > MAX_FILE_BYTES:
        raise Unreadable(f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    if lowered.endswith((".html", ".htm")):
        from agentkb.services.extract.html import html_text

        found = ExtractedText(html_text(_decode(data, html=True)))
    elif lowered.endswith(".pdf"):
        from agentkb.services.extract.pdf import pdf_text

        found = ExtractedText(*pdf_text(data))
    elif lowered.endswith(".docx"):
        from agentkb.services.extract.docx import docx_text

        found = ExtractedText(docx_text(data))
    else:
        found = ExtractedText(_decode(data, html=False))
    if not found.text.strip():
        raise Unreadable("no text")
    return found


def _decode(data: bytes, html: bool) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        if html:  # old pages declare latin-1/cp1252; every byte decodes, and tags are ASCII either way
            return data.decode("cp1252", errors="replace")
        raise Unreadable("not UTF-8 text") from None
