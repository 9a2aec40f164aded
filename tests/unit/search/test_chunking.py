"""Token-aware chunking: window sizes, overlap, word boundaries, hashes."""

import re

import pytest

from agentkb.services.ingest.chunking import chunk_text, content_hash


class WordTokenizer:
    """One token per word or punctuation mark; 'un##break' style pieces glued to the previous token."""

    def count(self, text: str) -> int:
        return len(self.spans(text))

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]


def test_short_text_is_one_chunk() -> None:
    (chunk,) = chunk_text("hello world.", WordTokenizer(), size=10, overlap=2)
    assert chunk.content == "hello world." and chunk.token_count == 3 and chunk.index == 0
    assert chunk.content_hash == content_hash("hello world.")


def test_windows_respect_size_and_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    chunks = chunk_text(text, WordTokenizer(), size=20, overlap=5)
    assert all(c.token_count <= 20 for c in chunks)
    first, second = chunks[0].content.split(), chunks[1].content.split()
    assert first[-5:] == second[:5]  # 5 tokens of overlap
    assert chunks[-1].content.endswith("w99")
    covered = set(" ".join(c.content for c in chunks).split())
    assert covered == set(text.split())


def test_words_are_not_split_across_windows() -> None:
    text = "alpha" + "".join(f"-x{i}" for i in range(30))  # one long hyphen-glued word: no boundary inside
    text = "a b c d e f g h " + text + " tail words here"
    chunks = chunk_text(text, WordTokenizer(), size=12, overlap=0)
    assert all(c.content for c in chunks)
    assert " ".join(c.content for c in chunks).replace(" ", "").startswith("abcdefgh")


def test_empty_text_and_bad_parameters() -> None:
    assert chunk_text("   ", WordTokenizer()) == []
    with pytest.raises(ValueError):
        chunk_text("x", WordTokenizer(), size=4)
    with pytest.raises(ValueError):
        chunk_text("x", WordTokenizer(), size=10, overlap=10)


def test_markdown_headings_travel_with_their_chunks() -> None:
    from agentkb.services.ingest.chunking import chunk_markdown

    text = ("# Incident handbook\n\nIntro words here.\n\n## Paging\n\nWho gets paged.\n\n### Escalation\n\n"
            "Escalate after ten minutes.\n\n## Postmortems\n\nWrite one within a week.\n")
    chunks = chunk_markdown(text, WordTokenizer(), size=50, overlap=5)
    assert [(c.context, c.content) for c in chunks] == [
        ("Incident handbook", "Intro words here."),
        ("Incident handbook > Paging", "Who gets paged."),
        ("Incident handbook > Paging > Escalation", "Escalate after ten minutes."),
        ("Incident handbook > Postmortems", "Write one within a week."),
    ]
    assert [c.index for c in chunks] == [0, 1, 2, 3]
    assert chunks[1].embedding_text == "Incident handbook > Paging\nWho gets paged."


def test_code_fences_hide_headings_and_plain_text_has_no_context() -> None:
    from agentkb.services.ingest.chunking import chunk_markdown, markdown_sections

    title, sections = markdown_sections("Body first.\n\n```\n# not a heading\n```\n\n# Late title\n\nMore.")
    assert title is None  # a level-1 heading that does not open the document is a section heading
    assert [s.headings for s in sections] == [(), ("Late title",)]
    assert "# not a heading" in sections[0].text
    (chunk,) = chunk_markdown("just text", WordTokenizer())
    assert chunk.context == "" and chunk.embedding_text == "just text"


def test_sections_from_other_parsers_and_an_explicit_title() -> None:
    from agentkb.services.ingest.chunking import MAX_CONTEXT_CHARS, Section, chunk_context, chunk_sections

    chunks = chunk_sections("Report.pdf title", [Section(("Results",), "It worked."), Section((), "Appendix.")],
                            WordTokenizer())
    assert [c.context for c in chunks] == ["Report.pdf title > Results", "Report.pdf title"]
    assert chunk_context("Same", ["Same", "Sub"]) == "Same > Sub"  # a heading repeating the title is kept once
    assert len(chunk_context("t" * 500, [])) == MAX_CONTEXT_CHARS


def test_reassemble_keeps_each_overlap_once() -> None:
    from agentkb.services.ingest.chunking import reassemble

    text = " ".join(f"w{i}" for i in range(60))
    chunks = chunk_text(text, WordTokenizer(), size=20, overlap=5)
    assert reassemble([c.content for c in chunks]).split() == text.split()
    assert reassemble(["alpha beta", "gamma delta"]) == "alpha beta\ngamma delta"
