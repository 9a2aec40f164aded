"""`agentkb docs delete`, `agentkb kb delete` (asks, or needs --yes) and `agentkb kb list --name/--ids`, on both
engines (issue 22: no way to delete one document; a whole KB went without asking; `kb list | cut -f1` returned
several ids once a second KB existed)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture()
def kb(run: Any, tmp_path: Path) -> Path:
    assert run("kb", "create", "--workspace", "w", "--name", "docs")[0] == 0
    for name, text in (("a/README.md", "Project A deploys on Fridays."), ("b/README.md", "Project B never deploys."),
                       ("notes.md", "Notes about the rota.")):
        (tmp_path / "src" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / name).write_text(text, encoding="utf-8")
    assert run("ingest", "--workspace", "w", "--kb", "docs", "--quiet", str(tmp_path / "src"))[0] == 0
    return tmp_path / "src"


def names(run: Any) -> set[str]:
    return {d["name"] for d in run("docs", "list", "--workspace", "w", "--kb", "docs", "--json")[1]}


def test_docs_delete_by_id_name_or_file_path(run: Any, kb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = run("docs", "list", "--workspace", "w", "--kb", "docs", "--json")[1]
    by_name = {d["name"]: d["id"] for d in listed}
    # by name
    code, out, _ = run("docs", "delete", "--workspace", "w", "--kb", "docs", "notes.md", "--json")
    assert (code, out) == (0, {"deleted": by_name["notes.md"], "name": "notes.md"})
    # by id
    assert run("docs", "delete", "--workspace", "w", "--kb", "docs", by_name["b/README.md"])[1] == \
        f"deleted {by_name['b/README.md']} (b/README.md)\n"
    # by the path of the file it was read from, relative to where the command runs
    monkeypatch.chdir(kb / "a")
    assert run("docs", "delete", "--workspace", "w", "--kb", "docs", "README.md")[0] == 0
    assert names(run) == set()
    _, hits, _ = run("search", "deploys", "--workspace", "w", "--kb", "docs", "--local", "--json")
    assert hits["data"]["results"] == []  # its chunks went with it


def test_docs_delete_refuses_unknown_and_ambiguous_references(run: Any, kb: Path) -> None:
    code, out, err = run("docs", "delete", "--workspace", "w", "--kb", "docs", "missing.md")
    assert (code, out, err) == (2, "", "error: no document 'missing.md' in knowledge base 'docs'\n")
    # a name that is also another document's id: two documents fit, neither is deleted
    listed = run("docs", "list", "--workspace", "w", "--kb", "docs", "--json")[1]
    victim = next(d for d in listed if d["name"] == "notes.md")
    write_document(victim["id"], "A document named like the id of notes.md.")
    code, _, err = run("docs", "delete", "--workspace", "w", "--kb", "docs", victim["id"])
    assert code == 2 and err.startswith(f"error: '{victim['id']}' names 2 documents of knowledge base 'docs': ")
    assert err.endswith("; give an id\n") and err.count("\n") == 1
    assert len(names(run)) == 4


def write_document(name: str, text: str) -> None:
    """A document as the API writes it (any name, no source path)."""
    from agentkb.composition import get_ports
    from agentkb.local.operator import deps, resolve_kb
    from agentkb.services.ingest.service import DocumentInput, prepare, write_prepared

    ports = get_ports()
    target = resolve_kb(ports, "w", "docs")
    write_prepared(deps(ports), target, DocumentInput(name, text, {}), *prepare(deps(ports), target, text))


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_kb_delete_asks_at_a_terminal_and_needs_yes_otherwise(run: Any, kb: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Given stdin that is not a terminal (a script): refused in one line, nothing deleted
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert run("kb", "delete", "docs", "--workspace", "w") == (
        2, "", "error: agentkb kb delete needs --yes when stdin is not a terminal\n")
    # At a terminal: asked; anything but y keeps it
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    code, _, err = run("kb", "delete", "docs", "--workspace", "w")
    assert code == 2 and "delete knowledge base 'docs' (" in err and "and its 3 documents? [y/N]" in err
    assert err.endswith("error: nothing deleted\n")
    assert len(names(run)) == 3
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert run("kb", "delete", "docs", "--workspace", "w")[0] == 0
    assert run("kb", "list", "--workspace", "w", "--json")[1] == []
    # --yes never asks
    run("kb", "create", "--workspace", "w", "--name", "again")
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert run("kb", "delete", "again", "--workspace", "w", "--yes")[0] == 0


def test_kb_list_by_name_prints_one_id(run: Any) -> None:
    for name in ("handbook", "runbooks"):
        run("kb", "create", "--workspace", "w", "--name", name)
    listed = run("kb", "list", "--workspace", "w", "--json")[1]
    handbook = next(k["id"] for k in listed if k["name"] == "handbook")
    assert run("kb", "list", "--workspace", "w", "--name", "handbook", "--ids") == (0, handbook + "\n", "")
    assert [k["name"] for k in run("kb", "list", "--workspace", "w", "--name", "runbooks", "--json")[1]] == [
        "runbooks"]
    assert run("kb", "list", "--workspace", "w", "--ids")[1].split() == [k["id"] for k in listed]
    assert run("kb", "show", "handbook", "--workspace", "w", "--json")[1]["id"] == handbook
