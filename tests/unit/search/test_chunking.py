"""Token-aware chunking: window sizes, overlap, word boundaries, hashes."""

import re

import pytest

from agentkb.services.chunking import chunk_text, content_hash


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
