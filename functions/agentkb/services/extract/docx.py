"""DOCX -> text with the standard library (a .docx is a zip of WordprocessingML): paragraphs, headings, tables.

No python-docx (and its lxml): zipfile + ElementTree read the one part we need, with a size cap against zip bombs.
"""

from __future__ import annotations

import io
import re
import zipfile
from xml.etree import ElementTree

from agentkb.models.digits import ascii_int
from agentkb.services.extract.text import Unreadable

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MAX_XML_BYTES = 64 * 1024 * 1024
_HEADING = re.compile(r"^(?:heading|titre|berschrift)\s*(\d)$", re.IGNORECASE)


def _part(data: bytes) -> bytes:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo("word/document.xml")
            if info.file_size > MAX_XML_BYTES:
                raise Unreadable("DOCX body larger than 64 MiB uncompressed")
            return archive.read(info)
    except (zipfile.BadZipFile, KeyError) as exc:
        raise Unreadable("not a DOCX file (no word/document.xml)") from exc


def _level(paragraph: ElementTree.Element) -> int:
    """Heading level from the paragraph style (Heading1..9, Title = 1), or its outline level; 0 for body text."""
    props = paragraph.find(f"{W}pPr")
    if props is None:
        return 0
    style = props.find(f"{W}pStyle")
    name = (style.get(f"{W}val") or "") if style is not None else ""
    if name.lower() == "title":
        return 1
    found = _HEADING.match(name.replace("Heading", "heading "))
    if found:
        return min(6, int(found.group(1)))
    outline = props.find(f"{W}outlineLvl")
    value = outline.get(f"{W}val") if outline is not None else None
    level = ascii_int(value)
    return 0 if level is None else min(6, level + 1)


def _text(element: ElementTree.Element) -> str:
    parts: list[str] = []
    for node in element.iter():
        if node.tag == f"{W}t" and node.text:
            parts.append(node.text)
        elif node.tag == f"{W}tab":
            parts.append("\t")
        elif node.tag in (f"{W}br", f"{W}cr"):
            parts.append("\n")
    return "".join(parts).strip()


def docx_text(data: bytes) -> str:
    """Body paragraphs in order, headings as Markdown `#` lines, table rows as `a | b | c`."""
    try:
        root = ElementTree.fromstring(_part(data))
    except ElementTree.ParseError as exc:
        raise Unreadable("DOCX body is not well-formed XML") from exc
    body = root.find(f"{W}body")
    blocks: list[str] = []
    for element in (body if body is not None else []):
        if element.tag == f"{W}p":
            text = _text(element)
            level = _level(element)
            if text:
                blocks.append(f"{'#' * level} {text}" if level else text)
        elif element.tag == f"{W}tbl":
            rows = [" | ".join(_text(cell) for cell in row.findall(f"{W}tc")) for row in element.findall(f"{W}tr")]
            blocks.append("\n".join(r for r in rows if r.strip(" |")))
    return "\n\n".join(b for b in blocks if b)
