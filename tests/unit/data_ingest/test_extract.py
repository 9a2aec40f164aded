"""Formats: HTML main text, PDF text layer with pages, DOCX headings and tables; unreadable files say why."""

from __future__ import annotations

import pytest

from agentkb.services.extract.files import Unreadable, extract
from tests.unit.data_ingest.docfiles import docx_bytes, pdf_bytes

PAGE = b"""<!doctype html><html><head><title>Ignored title</title><style>p{color:red}</style>
<script>var secret = "do not index";</script></head><body>
<nav><ul><li>Home<li>Pricing</ul></nav><header>Site banner</header>
<h1>Install &amp; configure</h1><p>Run the
installer.</p><ul><li>first<li>second</ul><pre>pip  install x
  --user</pre><div role="navigation">breadcrumbs</div><h2>Next steps</h2><p>Read <b>more</b>.</p>
<footer>copyright 2026</footer><noscript>enable js</noscript></body></html>"""


def test_html_keeps_the_main_text_and_headings_only() -> None:
    text = extract("page.html", PAGE).text
    assert text.startswith("# Install & configure\n\nRun the installer.")
    assert "## Next steps" in text and "Read more." in text
    assert "pip  install x\n  --user" in text  # preformatted text keeps its spacing
    for dropped in ("do not index", "color:red", "Home", "Pricing", "Site banner", "breadcrumbs", "copyright",
                    "enable js", "Ignored title"):
        assert dropped not in text


def test_html_with_a_main_element_drops_everything_around_it() -> None:
    page = b"<body><div>menu</div><main><h2>Only this</h2><p>body</p></main><div>related links</div></body>"
    assert extract("x.htm", page).text == "## Only this\n\nbody"


def test_html_without_headings_gets_its_title_as_one() -> None:
    assert extract("x.html", b"<title>Guide</title><p>text</p>").text == "# Guide\n\ntext"


def test_pdf_text_layer_keeps_page_boundaries() -> None:
    found = extract("a.pdf", pdf_bytes(["Alpha page words", "Beta page words", "Gamma page words"]))
    assert found.text.split("\n\n") == ["Alpha page words", "Beta page words", "Gamma page words"]
    beta = found.text.index("Beta")
    assert found.pages_of(0, 5) == (1,)
    assert found.pages_of(beta, beta + 4) == (2,)
    assert found.pages_of(0, len(found.text)) == (1, 2, 3)


def test_docx_headings_paragraphs_and_tables() -> None:
    data = docx_bytes([("Title", "Handbook"), ("Heading2", "Leave"), ("", "Ask your manager."),
                       ("table", "days|type"), ("", "")])
    assert extract("h.docx", data).text == "# Handbook\n\n## Leave\n\nAsk your manager.\n\ndays | type"


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("image.png", b"\x89PNG", "unsupported format (.png)"),
    ("Makefile", b"all:", "unsupported format (no suffix)"),
    ("notes.txt", b"\xff\xfe\x00bad", "not UTF-8 text"),
    ("empty.md", b"   \n", "no text"),
    ("broken.pdf", b"%PDF-1.4 garbage", "unreadable PDF"),
    ("scan.pdf", pdf_bytes([""]), "PDF has no text layer"),
    ("fake.docx", b"PK not a zip", "not a DOCX file"),
])
def test_unreadable_files_say_why(name: str, data: bytes, reason: str) -> None:
    with pytest.raises(Unreadable, match="^" + reason.replace("(", r"\(").replace(")", r"\)")):
        extract(name, data)
