"""Issue 25: the archive file refuses what it cannot vouch for (a changed record, a truncated file, a stranger's file)
before anything is written, and a record survives the trip byte for byte."""

from __future__ import annotations

import base64
import gc
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.cli.main import main
from agentkb.composition import get_ports
from agentkb.errors import BadRequest
from agentkb.services.portability.archive_file import ArchiveReader, ArchiveWriter, verify_file
from agentkb.services.portability.importer import import_archive
from agentkb.services.portability.records import canonical, canonical_pair, pack_vector, unpack_vector
from agentkb.services.snapshot.service import snapshot_bytes, snapshot_hash, snapshot_id_for

SNAPSHOT = {"snapshot_id": "s-1", "run_id": "r", "attempt_id": "a", "request_hash": "h", "created_at": "2026-01-01",
            "body": base64.b64encode(b'{"exact": "bytes"}').decode()}


def _archive(path: Path, snapshot: dict[str, str] = SNAPSHOT) -> Path:
    out = io.StringIO()
    writer = ArchiveWriter(out, {"workspace": "ws1", "engine": "embedded", "knowledge_bases": []})
    writer.write("snapshots", snapshot)
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


def test_the_cyclic_collector_is_off_while_an_import_runs_and_as_it_was_after(tmp_path: Path, data_dir: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    archive = _archive(tmp_path / "a.jsonl")
    seen: list[bool] = []
    put = get_ports().snapshots.put_if_absent
    monkeypatch.setattr(type(get_ports().snapshots), "put_if_absent",
                        lambda self, snapshot: seen.append(gc.isenabled()) or put(snapshot))
    assert gc.isenabled()
    import_archive(get_ports(), archive)
    assert seen == [False] and gc.isenabled()
    (tmp_path / "bad.jsonl").write_text('{"hello": "world"}\n', encoding="utf-8")
    with pytest.raises(BadRequest):  # a failed import puts it back too
        import_archive(get_ports(), tmp_path / "bad.jsonl")
    assert gc.isenabled()
    gc.disable()
    try:  # and one that was off stays off
        import_archive(get_ports(), archive)
        assert not gc.isenabled()
    finally:
        gc.enable()


RUN, ATTEMPT = "3b7f0c2e-1d4a-4c5b-9e6f-7a8b9c0d1e2f", "5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f"


def _snapshot_of_ws1() -> tuple[dict[str, Any], dict[str, str]]:
    """A snapshot document as the snapshot service builds it in ws1 (one memory item), and its archive record."""
    doc = {"snapshotId": snapshot_id_for("ws1", RUN, ATTEMPT), "runId": RUN, "attemptId": ATTEMPT,
           "scope": {"workspaceId": "ws1", "maxClassification": "internal", "principal": "p"},
           "items": [{"class": "memory", "sourceId": "n", "chunkId": "memory:7", "content": "x",
                      "provenance": "agentkb://ws/ws1/memories/7"}], "exclusions": []}
    doc["hash"] = snapshot_hash(doc)
    return doc, {**SNAPSHOT, "snapshot_id": doc["snapshotId"], "run_id": RUN, "attempt_id": ATTEMPT,
                 "body": base64.b64encode(snapshot_bytes(doc)).decode()}


def test_a_renamed_workspace_gets_the_records(tmp_path: Path, data_dir: Path) -> None:
    """A snapshot's id derives from its workspace, run and attempt: renamed, it is stored under ws2's id for them
    (what a POST /v1/snapshots of that attempt in ws2 looks up), its body naming ws2, its hash computed again. Into
    an engine that holds nothing of ws1, the ids its body cites are kept."""
    doc, record = _snapshot_of_ws1()
    report = import_archive(get_ports(), _archive(tmp_path / "a.jsonl", record), "ws2")
    assert not report.ids_remapped and "snapshots" in report.verified
    assert get_ports().snapshots.get(doc["snapshotId"]) is None
    stored = get_ports().snapshots.get(snapshot_id_for("ws2", RUN, ATTEMPT))
    assert stored is not None and stored.workspace_id == "ws2"
    body = json.loads(stored.body)
    assert (body["snapshotId"], body["scope"]["workspaceId"]) == (stored.snapshot_id, "ws2")
    assert body["hash"] == snapshot_hash(body) != doc["hash"]
    assert (body["items"][0]["chunkId"], body["items"][0]["provenance"]) == ("memory:7", "agentkb://ws/ws2/memories/7")
    assert stored.body == snapshot_bytes(body)  # serialised as the snapshot service serialises
    assert not import_archive(get_ports(), _archive(tmp_path / "a.jsonl", record), "ws2").changed


def test_the_cli_says_when_a_copy_beside_its_original_got_new_ids(tmp_path: Path, data_dir: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    archive = _archive(tmp_path / "a.jsonl", _snapshot_of_ws1()[1])
    assert main(["import", str(archive), "--quiet"]) == 0  # ws1 itself: now this engine holds the archive's ids
    capsys.readouterr()
    assert main(["import", str(archive), "--workspace", "ws2", "--quiet"]) == 0
    assert "ids remapped: this engine holds workspace ws1" in capsys.readouterr().out
    assert main(["import", str(archive), "--workspace", "ws2", "--quiet", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["idsRemapped"] and not again["changed"]
    memory = json.loads(get_ports().snapshots.get(snapshot_id_for("ws2", RUN, ATTEMPT)).body)["items"][0]  # type: ignore[union-attr]
    assert memory["chunkId"] != "memory:7" and memory["provenance"] == "agentkb://ws/ws2/memories/" + memory[
        "chunkId"].removeprefix("memory:")  # a memory id no record of the archive holds: mapped all the same


@pytest.mark.parametrize("damage", ["changed", "truncated", "no manifest", "not an archive", "not UTF-8"])
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
    elif damage == "not an archive":
        lines = ['{"hello": "world"}\n']
    archive.write_text("".join(lines), encoding="utf-8")
    if damage == "not UTF-8":  # a byte no UTF-8 text has, inside a record's string
        archive.write_bytes(archive.read_bytes().replace(b'"run_id":"r"', b'"run_id":"\xff"', 1))
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


def _vector_archive(path: Path) -> Path:
    out = io.StringIO()
    writer = ArchiveWriter(out, {"workspace": "ws1", "engine": "embedded", "knowledge_bases": []})
    writer.write("snapshots", SNAPSHOT)
    writer.write("memories", {"memory_id": 1, "body": 'a "quoted" body, é', "embedding": pack_vector([0.5, -1.0]),
                              "zeta": {"embedding": "nested, not a vector field"}})
    writer.finish()
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def test_a_record_splits_at_its_vector_fields_into_the_canonical_texts_with_and_without_them() -> None:
    record = {"z": [1, {"b": 2}], "embedding": "AAAA", "a": 'é"', "profile": {"model": "m"}, "m": None}
    full, content = canonical_pair(record)
    assert full == canonical(record)
    assert content == canonical({k: v for k, v in record.items() if k not in ("embedding", "profile")})
    assert canonical_pair({"embedding": None}) == ('{"embedding":null}', "{}")


def test_an_archive_serialised_again_by_another_tool_still_verifies_and_a_changed_one_does_not(
        tmp_path: Path) -> None:
    # Given an archive whose records another tool wrote again inside the writer's line form (spaces, keys in
    # another order: the first, as-written pass cannot agree with the manifest)
    archive = _vector_archive(tmp_path / "a.jsonl")
    header, manifest = verify_file(archive)
    lines = archive.read_text(encoding="utf-8").splitlines(keepends=True)
    items = [json.loads(line) for line in lines[1:-1]]
    loose = [lines[0]] + ['{"r":' + json.dumps(dict(reversed(item["r"].items()))) + f',"s":"{item["s"]}"}}\n'
                          for item in items] + [lines[-1]]
    assert loose[1:-1] != lines[1:-1]
    (tmp_path / "loose.jsonl").write_text("".join(loose), encoding="utf-8")
    # Then its records are digested canonically and it verifies, with the same manifest
    assert verify_file(tmp_path / "loose.jsonl") == (header, manifest)
    # and a record changed in the loose file is still refused
    changed = "".join(loose).replace("quoted", "QUOTED")
    (tmp_path / "changed.jsonl").write_text(changed, encoding="utf-8")
    with pytest.raises(BadRequest, match="does not match its manifest"):
        verify_file(tmp_path / "changed.jsonl")
