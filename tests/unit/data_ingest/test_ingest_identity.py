"""`agentkb ingest`: names that never collide, conflicts instead of silent replacement, honest counts, --prune."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.cli.main import main
from tests.unit.data_ingest.docfiles import pdf_bytes


@pytest.fixture()
def cli(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def run(*argv: str) -> tuple[int, Any]:
        code = main([*argv, "--data-dir", str(data_dir)])
        out = capsys.readouterr().out
        return code, json.loads(out) if "--json" in argv else out

    run("kb", "create", "--workspace", "w", "--name", "docs", "--tag", "team:text")
    return run


def ingest(cli: Any, *args: str) -> tuple[int, dict[str, Any]]:
    return cli("ingest", "--workspace", "w", "--kb", "docs", "--quiet", "--json", *args)  # type: ignore[no-any-return]


def names(cli: Any) -> dict[str, str]:
    _, docs = cli("docs", "list", "--workspace", "w", "--kb", "docs", "--json")
    return {d["name"]: d["sourcePath"] for d in docs}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_two_readmes_of_one_run_are_two_documents(cli: Any, tmp_path: Path) -> None:
    # Given the case: two files of the same name from different folders, in one command
    yaml = write(tmp_path / "doc" / "python3-yaml" / "README.md", "PyYAML is a YAML parser and emitter for Python.")
    httplib2 = write(tmp_path / "doc" / "python3-httplib2" / "README.md", "httplib2 is an HTTP client library.")
    # When both are ingested
    code, summary = ingest(cli, str(yaml), str(httplib2))
    # Then both are documents, named below their common folder, and the summary says so
    assert code == 0
    assert (summary["created"], summary["updated"], summary["conflicts"]) == (2, 0, [])
    assert names(cli) == {"python3-yaml/README.md": str(yaml), "python3-httplib2/README.md": str(httplib2)}
    assert {d["name"] for d in summary["documents"]} == set(names(cli))
    _, found = cli("search", "--workspace", "w", "--kb", "docs", "YAML parser", "--json")
    assert found["data"]["results"][0]["documentName"] == "python3-yaml/README.md"


def test_replacing_a_document_from_another_path_is_a_conflict_unless_replace(cli: Any, tmp_path: Path) -> None:
    first = write(tmp_path / "a" / "README.md", "first project readme")
    second = write(tmp_path / "b" / "README.md", "second project readme")
    assert ingest(cli, str(first))[1]["created"] == 1
    code, summary = ingest(cli, str(second))  # named README.md too: it would replace the first one
    assert code == 1
    assert (summary["created"], summary["updated"]) == (0, 0)
    assert summary["conflicts"][0] | {"documentId": "x"} == {
        "name": "README.md", "path": str(second), "existingSourcePath": str(first), "documentId": "x"}
    assert names(cli) == {"README.md": str(first)}  # nothing was lost
    code, summary = ingest(cli, str(second), "--replace")
    assert (code, summary["updated"], summary["conflicts"]) == (0, 1, [])
    assert names(cli) == {"README.md": str(second)}


def test_unchanged_files_are_skipped_and_counts_are_what_happened(cli: Any, tmp_path: Path) -> None:
    root = tmp_path / "kb"
    write(root / "one.md", "---\nteam: platform\nowner: someone\n---\nThe first document.")
    write(root / "sub" / "two.txt", "The second document.")
    write(root / "logo.png", "not really an image")
    write(root / ".git" / "config", "[core]")
    _, summary = ingest(cli, str(root))
    assert (summary["created"], summary["unchanged"]) == (2, 0)
    assert {s["reason"] for s in summary["skipped"]} == {"unsupported format (.png)", "hidden folder (not walked)"}
    warning = "front-matter key 'owner' is not a tag of this knowledge base (ignored)"
    assert summary["warnings"] == [{"path": str(root / "one.md"), "message": warning}]
    write(root / "sub" / "two.txt", "The second document, edited.")
    _, summary = ingest(cli, str(root))
    assert (summary["created"], summary["updated"], summary["unchanged"]) == (0, 1, 1)
    assert summary["chunks"] == 1  # only what was written


def test_prune_removes_only_documents_whose_files_are_gone_under_the_folders_given(cli: Any, tmp_path: Path) -> None:
    root, other = tmp_path / "kb", tmp_path / "other"
    keep, gone = write(root / "keep.md", "kept"), write(root / "gone.md", "deleted later")
    outside = write(other / "elsewhere.md", "not under the pruned folder")
    ingest(cli, str(root))
    ingest(cli, str(outside))
    gone.unlink()
    outside.unlink()
    _, summary = ingest(cli, str(root), "--prune")
    assert summary["removed"] == 1
    assert [d["name"] for d in summary["documents"] if d["outcome"] == "removed"] == ["gone.md"]
    assert set(names(cli)) == {"keep.md", "elsewhere.md"}
    assert str(keep) in names(cli).values()


def test_pdf_pages_travel_with_their_chunks(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "manual.pdf").write_bytes(pdf_bytes(["Installation requires a license key.",
                                                     "Uninstall with the removal wizard."]))
    _, summary = ingest(cli, str(tmp_path / "manual.pdf"))
    assert summary["created"] == 1
    _, found = cli("search", "--workspace", "w", "--kb", "docs", "removal wizard", "--json")
    hit = found["data"]["results"][0]
    assert hit["documentName"] == "manual.pdf" and hit["metadata"]["pages"] == [1, 2]


def test_bad_inputs_are_one_line_errors(cli: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", "--workspace", "w", "--kb", "docs", str(tmp_path / "missing")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["ingest", "--workspace", "w", "--kb", "nope", str(tmp_path)]) == 2
