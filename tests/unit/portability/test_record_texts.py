"""Issue 26 (the bulk path's speed): the archive's chunk texts are made member by member, cut by bytes and hashed
without parsing; each shortcut must give exactly the text and digests the general canonical path gives, and step
aside for anything it was not made for."""

from __future__ import annotations

import io
import json
from array import array
from pathlib import Path

import pytest

from agentkb.errors import BadRequest
from agentkb.models.domain import Chunk
from agentkb.services.portability.archive_file import (
    ArchiveReader,
    ArchiveWriter,
    as_written_digests,
    parse,
    verify_file,
)
from agentkb.services.portability.digests import Digests, SectionDigest
from agentkb.services.portability.records import (
    canonical,
    chunk_record,
    chunk_texts,
    chunk_texts_of,
    pack_vector,
    without_embedding,
)

AWKWARD = 'a "quoted" \\ back\\slash, é, 中文, \x00\x01\x1f\x7f \n\t\r\b\f \u2028 ,"embedding":"x" ,"id":"y" 🙂'
CHUNKS = [
    Chunk("c1", "d1", 0, "plain text", 3, "h1", array("f", [0.5, -1.0, 3.25]), (), "", False),
    Chunk("c2", "d\"2", 7, AWKWARD, 12, "h2", None, (1, 2, 30), AWKWARD, True),
    Chunk("c3", "d3", 1, "", 0, "", [0.1, 0.2], (4,), "Title > Heading", False),  # a list from an embedder
    Chunk("c4", "d4", 2, "empty vector", 1, "h4", [], (), "", False),
]


def _reference(record: dict) -> tuple[bytes, bytes]:
    content = {k: v for k, v in record.items() if k != "embedding"}
    return canonical(record).encode("utf-8"), canonical(content).encode("utf-8")


@pytest.mark.parametrize("chunk", CHUNKS, ids=[c.id for c in CHUNKS])
def test_chunk_texts_are_exactly_the_canonical_texts_with_and_without_the_vector(chunk: Chunk) -> None:
    record = chunk_record(chunk)
    assert chunk_texts_of(chunk) == _reference(record)
    assert chunk_texts(record) == _reference(record)
    full, content = _reference(record)
    assert chunk_texts(record, full.decode("utf-8")) == (full, content)
    assert without_embedding(full) == content


@pytest.mark.parametrize("change", [{"token_count": 3.0}, {"chunk_index": True}, {"pages": [1.5]}, {"secret": 1},
                                    {"content": None}, {"pages": (1,)}, {"embedding": [0.5]}])
def test_a_record_of_another_shape_takes_the_general_path_and_digests_the_same(change: dict) -> None:
    record = {**chunk_record(CHUNKS[0]), **change}
    assert chunk_texts(record) is None
    general = SectionDigest()
    general.add_texts(*_reference(record))
    digests = Digests()
    digests.add("chunks", record)
    assert digests.sections["chunks"].summary() == general.summary()


def test_a_text_without_an_embedding_member_is_not_cut() -> None:
    assert without_embedding(b'{"chunk_index":0,"content":"x","id":"c"}') is None
    assert without_embedding(b'{"chunk_index":0,"embedding":"AAAA') is None  # torn: no closing quote
    assert without_embedding(b'{"chunk_index":0,"embedding":[1,2],"id":"c"}') is None


def _archive(path: Path) -> Path:
    out = io.StringIO()
    writer = ArchiveWriter(out, {"workspace": "ws1", "engine": "embedded", "knowledge_bases": []})
    for chunk in CHUNKS:
        writer.write("chunks", chunk)
    writer.write("chunks", {**chunk_record(CHUNKS[0]), "id": "c5", "token_count": 2.5})  # the general path
    writer.finish()
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_the_writer_and_the_byte_level_verifier_agree_with_a_canonical_digest_of_every_record(
        tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.jsonl")
    lines = archive.read_text(encoding="utf-8").split("\n")[:-1]
    records = [json.loads(line)["r"] for line in lines[1:-1]]
    expected = SectionDigest()
    for record in records:
        expected.add_texts(*_reference(record))
    _, manifest = verify_file(archive)
    assert manifest["chunks"] == expected.summary()
    assert as_written_digests(ArchiveReader(archive)) == manifest  # the byte-level pass agreed: no careful second pass
    assert records[0]["embedding"] == pack_vector([0.5, -1.0, 3.25])


def test_a_changed_vector_is_refused_though_the_content_digest_still_agrees(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.jsonl")
    text = archive.read_text(encoding="utf-8")
    vector = pack_vector([0.5, -1.0, 3.25])
    assert vector is not None and text.count(vector) == 2
    (tmp_path / "b.jsonl").write_text(text.replace(vector, pack_vector([0.5, -1.0, 3.5]) or "", 1), encoding="utf-8")
    with pytest.raises(BadRequest, match="does not match its manifest") as refused:
        verify_file(tmp_path / "b.jsonl")
    detail = json.loads(json.dumps(refused.value.details))
    assert [d["path"] for d in detail] == ["chunks"]


CHUNK_LINE = ('{"r":{"chunk_index":%s,"content":"x%s","content_hash":"h","context":"","document_id":"d",'
              '"embedding":null,"id":"c","pages":[%s],"secret":false,"token_count":%s},"s":"chunks"}\n')


@pytest.mark.parametrize("line", [
    CHUNK_LINE % (0, "", "1,2", 3), CHUNK_LINE % (123456789012345678901234567890, "", "", 3),
    CHUNK_LINE % (0, "", "98765432109876543210987", 3), CHUNK_LINE % (0, "", "", "12345678901234567890123"),
    CHUNK_LINE % (0, "\\ud800", "", 3), CHUNK_LINE % (0, "", "", "NaN"), CHUNK_LINE % (0, "é", "2.5", 3),
    '{"r":{"big": 123456789012345678901234567890},"s":"memories"}\n'])
def test_an_archive_line_parses_as_json_parses_it_whichever_parser_reads_it(line: str) -> None:
    assert repr(parse(line)) == repr(json.loads(line))


def test_a_line_json_refuses_is_refused() -> None:
    with pytest.raises(ValueError):
        parse('{"torn": ')
