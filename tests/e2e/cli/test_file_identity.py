"""One file, one document: re-ingesting a file by itself, or through another folder that holds it, updates or
skips the document it already is (keeping its name), on both engines (issue 22: `docs/` then `docs/a/README.md`
stored the README twice)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkb.cli.main import main


class Cli:
    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def json(self, *argv: str) -> Any:
        code = main([*argv, "--json"])
        out = self.capsys.readouterr().out
        assert code in (0, 1), out
        return json.loads(out)

    def ingest(self, *paths: Path, replace: bool = False) -> dict[str, Any]:
        extra = ["--replace"] if replace else []
        return self.json("ingest", "--workspace", "w", "--kb", "docs", "--quiet", *extra,  # type: ignore[no-any-return]
                         *map(str, paths))

    def documents(self) -> dict[str, str]:
        """name -> source path of every document of the KB."""
        return {d["name"]: d["sourcePath"] for d in self.json("docs", "list", "--workspace", "w", "--kb", "docs")}

    def content(self, name: str) -> str:
        return self.json("docs", "show", name, "--workspace", "w", "--kb", "docs", "--content")["content"]  # type: ignore[no-any-return]


@pytest.fixture()
def cli(engine: str, capsys: pytest.CaptureFixture[str]) -> Cli:
    assert main(["kb", "create", "--workspace", "w", "--name", "docs"]) == 0
    capsys.readouterr()
    return Cli(capsys)


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "a").mkdir(parents=True)
    (docs / "a" / "README.md").write_text("Project A explains the deployment pipeline.", encoding="utf-8")
    (docs / "b.md").write_text("Document B lists the on-call rota.", encoding="utf-8")
    return docs


def counts(summary: dict[str, Any]) -> tuple[int, int, int, int]:
    return summary["created"], summary["updated"], summary["unchanged"], len(summary["conflicts"])


def edit(tree: Path, changed: bool) -> str:
    text = "Project A explains the deployment pipeline, now with rollbacks." if changed else \
        "Project A explains the deployment pipeline."
    (tree / "a" / "README.md").write_text(text, encoding="utf-8")
    return text


@pytest.mark.parametrize("changed", [False, True])
def test_a_file_of_an_ingested_folder_is_the_same_document(cli: Cli, tree: Path, changed: bool) -> None:
    # Given the folder ingested: the README is named a/README.md
    assert counts(cli.ingest(tree)) == (2, 0, 0, 0)
    readme = str((tree / "a" / "README.md").resolve())
    # When the file is ingested by itself (the run would name it README.md)
    text = edit(tree, changed)
    summary = cli.ingest(tree / "a" / "README.md")
    # Then the document it already is was updated or left alone, under its name; nothing new was stored
    assert counts(summary) == ((0, 1, 0, 0) if changed else (0, 0, 1, 0))
    assert [d["name"] for d in summary["documents"]] == ["a/README.md"]
    assert cli.documents() == {"a/README.md": readme, "b.md": str((tree / "b.md").resolve())}
    assert cli.content("a/README.md") == text


@pytest.mark.parametrize("changed", [False, True])
def test_a_file_ingested_alone_keeps_its_document_when_its_folder_comes(cli: Cli, tree: Path, changed: bool) -> None:
    assert counts(cli.ingest(tree / "a" / "README.md")) == (1, 0, 0, 0)
    assert set(cli.documents()) == {"README.md"}
    text = edit(tree, changed)
    summary = cli.ingest(tree)  # would name it a/README.md
    assert counts(summary) == ((1, 1, 0, 0) if changed else (1, 0, 1, 0))  # b.md is new
    assert set(cli.documents()) == {"README.md", "b.md"}
    assert cli.content("README.md") == text


@pytest.mark.parametrize("changed", [False, True])
@pytest.mark.parametrize("order", ["outer-first", "inner-first"])
def test_overlapping_folders_store_each_file_once(cli: Cli, tree: Path, changed: bool, order: str) -> None:
    first, second = (tree, tree / "a") if order == "outer-first" else (tree / "a", tree)
    cli.ingest(first)
    names = cli.documents()
    text = edit(tree, changed)
    summary = cli.ingest(second)
    readme = "a/README.md" if order == "outer-first" else "README.md"
    assert (summary["updated"], summary["conflicts"]) == (int(changed), [])
    assert cli.documents() == {**names, **({"b.md": str((tree / "b.md").resolve())} if first != tree else {})}
    assert sum(1 for path in cli.documents().values() if path.endswith("/a/README.md")) == 1
    assert cli.content(readme) == text


def test_a_new_file_never_takes_the_name_of_a_file_already_stored(cli: Cli, tree: Path) -> None:
    # Given docs/a/README.md ingested alone (named README.md), and then a docs/README.md beside the folder
    cli.ingest(tree / "a" / "README.md")
    (tree / "README.md").write_text("The top-level readme.", encoding="utf-8")
    # When the whole folder comes, even with --replace
    for replace in (False, True):
        summary = cli.ingest(tree, replace=replace)
        # Then docs/README.md (named README.md by this run) is a conflict, and the stored file keeps its document
        assert [(c["path"], c["name"]) for c in summary["conflicts"]] == [(str((tree / "README.md").resolve()),
                                                                          "README.md")]
        assert "--replace cannot take it" in summary["conflicts"][0]["reason"]
        assert cli.documents()["README.md"] == str((tree / "a" / "README.md").resolve())
    assert cli.content("README.md") == "Project A explains the deployment pipeline."


def test_a_file_stored_twice_by_an_earlier_version_is_reported_and_one_copy_kept(cli: Cli, tree: Path) -> None:
    from agentkb.composition import get_ports
    from agentkb.local.operator import deps, resolve_kb
    from agentkb.services.ingest.service import DocumentInput, prepare, write_prepared

    # Given the old bug's result: the README stored as a/README.md (its folder) and README.md (the file alone)
    readme = tree / "a" / "README.md"
    ports = get_ports()
    kb = resolve_kb(ports, "w", "docs")
    for name in ("a/README.md", "README.md"):
        text = readme.read_text(encoding="utf-8")
        write_prepared(deps(ports), kb, DocumentInput(name, text, {}, source_path=str(readme.resolve())),
                       *prepare(deps(ports), kb, text))
    # When the file comes again by itself
    summary = cli.ingest(readme)
    # Then the copy of this run's name is the file's document, and the other copy is named in a warning
    assert counts(summary) == (0, 0, 1, 0)
    assert [d["name"] for d in summary["documents"]] == ["README.md"]
    assert [w["message"] for w in summary["warnings"]] == [
        "also stored as 'a/README.md'; 'README.md' is kept up to date (agentkb docs delete removes a copy)"]
