"""contracts/ is a verbatim copy of the team's upstream contract folder, which lives beside the main checkout (a
sibling folder named `shared`, never needed by the tests): where that folder is there, every document in it is
vendored here byte for byte, and nothing vendored here is missing from it but our own SOURCES.md and reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.upstream import CONTRACTS, ROOT

OURS = {"SOURCES.md", "upstream.py"}  # what contracts/ adds to the team's folder


def checkout_root(root: Path) -> Path:
    """The main checkout: `root` itself, or for a linked git worktree the checkout that owns its .git."""
    marker = root / ".git"
    if not marker.is_file():
        return root
    gitdir = Path(marker.read_text().removeprefix("gitdir:").strip())
    common = gitdir / "commondir"
    return (gitdir / common.read_text().strip()).resolve().parent if common.is_file() else root


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def test_the_vendored_contracts_are_the_teams_byte_for_byte() -> None:
    team = checkout_root(ROOT).parent / "shared" / "contracts"
    if not (team / "README.md").is_file():
        pytest.skip(f"no team contract folder at {team} (a clone that stands alone): nothing to compare with")
    theirs, vendored = files(team), files(CONTRACTS)
    assert sorted(theirs) == sorted(set(vendored) - OURS), "contracts/ and the team's folder list different files"
    changed = [name for name, data in theirs.items() if vendored[name] != data]
    assert changed == [], f"vendored copies differ from the team's: {changed} (copy the folder over contracts/)"


def test_every_vendored_document_names_its_source() -> None:
    sources = (CONTRACTS / "SOURCES.md").read_text(encoding="utf-8")
    documents = {name for name in files(CONTRACTS) if "/" not in name} - OURS
    assert {name for name in documents if f"`{name}`" not in sources} == set()
