"""Issue 25: the archive file refuses what it cannot vouch for (a changed record, a truncated file, a stranger's file)
before anything is written, and a record survives the trip byte for byte."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest

from agentkb.composition import get_ports
from agentkb.errors import BadRequest
from agentkb.services.portability.archive_file import ArchiveReader, ArchiveWriter, verify_file
from agentkb.services.portability.importer import import_archive
from agentkb.services.portability.records import pack_vector, unpack_vector

SNAPSHOT = {"snapshot_id": "s-1", "run_id": "r", "attempt_id": "a", "request_hash": "h", "created_at": "2026-01-01",
            "body": base64.b64encode(b'{"exact": "bytes"}').decode()}


def _archive(path: Path) -> Path:
    out = io.StringIO()
    writer = ArchiveWriter(out, {"workspace": "ws1", "engine": "embedded", "knowledge_bases": []})
    writer.write("snapshots", SNAPSHOT)
    writer.finish()
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_sound_archive_imports_and_a_second_import_writes_nothing(tmp_path: Path, data_dir: Path) -> None:
    archive = _archive(tmp_path / "a.jsonl")
    first = import_archive(get_ports(), archive)
    assert first.tally.written == {"snapshots": 1} and "snapshots" in first.verified
    stored = get_ports().snapshots.get("s-1")
    assert stored is not None and stored.body == b'{"exact": "bytes"}' and stored.workspace_id == "ws1"
    second = import_archive(get_ports(), archive)
    assert not second.changed and second.tally.present == {"snapshots": 1}


def test_a_renamed_workspace_gets_the_records(tmp_path: Path, data_dir: Path) -> None:
    import_archive(get_ports(), _archive(tmp_path / "a.jsonl"), "ws2")
    stored = get_ports().snapshots.get("s-1")
    assert stored is not None and stored.workspace_id == "ws2"


@pytest.mark.parametrize("damage", ["changed", "truncated", "no manifest", "not an archive"])
def test_a_damaged_archive_is_refused_before_anything_is_written(damage: str, tmp_path: Path,
                                                                 data_dir: Path) -> None:
    archive = _archive(tmp_path / "a.jsonl")
    lines = archive.read_text(encoding="utf-8").splitlines(keepends=True)
    if damage == "changed":
        lines[1] = lines[1].replace('"run_id":"r"', '"run_id":"R"')
        assert lines[1] != archive.read_text(encoding="utf-8").splitlines(keepends=True)[1]
    elif damage == "truncated":
        lines[-1] = lines[-1][:20]
    elif damage == "no manifest":
        lines = lines[:-1]
    else:
        lines = ['{"hello": "world"}\n']
    archive.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(BadRequest):
        verify_file(archive)
    with pytest.raises(BadRequest):
        import_archive(get_ports(), archive)
    assert get_ports().snapshots.get("s-1") is None


def test_a_vector_survives_the_trip_exactly() -> None:
    vector = [0.1, -0.25, 1 / 3, 0.0]
    once = unpack_vector(pack_vector(vector))
    assert once is not None and pack_vector(once) == pack_vector(vector)
    assert [round(v, 6) for v in once] == [0.1, -0.25, 0.333333, 0.0]


def test_the_reader_gives_back_what_the_writer_wrote(tmp_path: Path) -> None:
    assert list(ArchiveReader(_archive(tmp_path / "a.jsonl")).records()) == [("snapshots", SNAPSHOT)]
