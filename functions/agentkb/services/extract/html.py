"""HTML -> the page's main text: no scripts, styles, navigation, headers, footers or forms; headings as `#`."""

from __future__ import annotations

import re
from html.parser import HTMLParser

SKIP = frozenset({"script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form", "svg",
                  "iframe", "object", "canvas", "button", "select", "head"})
BLOCK = frozenset({"p", "div", "section", "article", "main", "ul", "ol", "li", "table", "tr", "br", "hr", "pre",
                   "blockquote", "dl", "dt", "dd", "figure", "figcaption", "details", "summary", "h1", "h2", "h3",
                   "h4", "h5", "h6"})
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "embed", "source", "track",
                  "wbr", "param"})
_SPACES = re.compile(r"[ \t\r\f\v]+")
_BLANKS = re.compile(r"\n\s*\n\s*\n+")


class _Region:
    """An element being inside of, tracked by its tag name's nesting (robust to unclosed <p>/<li> inside it)."""

    def __init__(self) -> None:
        self.tag: str | None = None
        self.depth = 0

    def enter(self, tag: str, starts: bool) -> bool:
        """Count a start tag; True while inside (starting one when `starts`)."""
        if self.tag is not None:
            self.depth += tag == self.tag
            return True
        if starts:
            self.tag, self.depth = tag, 1
        return starts

    def leave(self, tag: str) -> None:
        if self.tag == tag:
            self.depth -= 1
            if self.depth == 0:
                self.tag = None


class _MainText(HTMLParser):
    def __init__(self, only_main: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.only_main = only_main
        self.out: list[str] = []
        self.title: list[str] = []
        self.skipped = _Region()
        self.main = _Region()
        self.in_title = False
        self.pre_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        role = dict(attrs).get("role")
        if tag == "title":
            self.in_title = True
        if tag not in VOID:
            self.main.enter(tag, tag in ("main", "article") or role == "main")
            if self.skipped.enter(tag, tag in SKIP or role in ("navigation", "banner", "contentinfo")):
                return
        if not self._keeping():
            return
        if tag == "pre":
            self.pre_depth += 1
        if tag in BLOCK:
            heading = "#" * int(tag[1]) + " " if tag[0] == "h" and tag[1:].isdigit() else ""
            self.out.append("\n\n" + heading + ("- " if tag == "li" else ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if self.skipped.tag is not None:
            self.skipped.leave(tag)
            return
        if self._keeping():
            if tag == "pre":
                self.pre_depth = max(0, self.pre_depth - 1)
            if tag in BLOCK:
                self.out.append("\n\n" if tag != "li" else "\n")
        self.main.leave(tag)

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif self._keeping():
            self.out.append(data if self.pre_depth else _SPACES.sub(" ", data.replace("\n", " ")))

    def _keeping(self) -> bool:
        return self.skipped.tag is None and (not self.only_main or self.main.tag is not None)


def html_text(markup: str) -> str:
    """The main text (the <main>/<article> content when the page marks one), headings as Markdown `#` lines."""
    lowered = markup.lower()
    only_main = "<main" in lowered or "<article" in lowered or 'role="main"' in lowered
    parser = _MainText(only_main)
    parser.feed(markup)
    parser.close()
    body = "\n".join(line.strip() if not line.startswith(" ") else line.rstrip()
                     for line in "".join(parser.out).split("\n"))
    body = _BLANKS.sub("\n\n", body).strip()
    title = " ".join("".join(parser.title).split())
    if title and not body.startswith("# "):
        body = f"# {title}\n\n{body}"
    return body
