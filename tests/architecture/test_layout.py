"""The layout the README's Architecture section describes, held: rooms by capability, small rooms and modules,
packages that only name their folder, and no test or benchmark that reaches code through sys.path."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "functions" / "agentkb"
ROOM_MODULES = 8  # a capability with more has two capabilities in it
ENGINE_TOP_MODULES = 10  # the rest of an engine lives in folders named by what they hold
MODULE_LINES = 260
SYS_PATH = re.compile(r"\bsys\.path(\.(insert|append|extend|remove)\(|\s*\[|\s*\+?=)")


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")


def test_services_are_rooms_by_capability_with_no_flat_modules() -> None:
    services = PACKAGE / "services"
    assert modules(services) == [], "every service lives in its capability's folder (services/<capability>/)"
    rooms = [p for p in services.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert rooms
    crowded = {room.name: len(modules(room)) for room in rooms if len(modules(room)) > ROOM_MODULES}
    assert crowded == {}, f"rooms over {ROOM_MODULES} modules"


@pytest.mark.parametrize("engine", ["aws", "embedded"])
def test_each_engine_keeps_few_modules_at_its_top(engine: str) -> None:
    top = modules(PACKAGE / "adapters" / engine)
    assert len(top) <= ENGINE_TOP_MODULES, [p.name for p in top]


def test_packages_are_empty() -> None:
    """An __init__.py holds nothing: no re-exports, no logic, nothing a cold start imports for a package's name."""
    busy = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("__init__.py") if p.read_text().strip())
    assert busy == []


def test_no_module_outgrows_one_screenful_of_concerns() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MODULE_LINES}
    assert long == {}, f"modules over {MODULE_LINES} lines"


@pytest.mark.parametrize("tree", ["tests", "bench", "testkit"])
def test_tests_and_benchmarks_import_without_editing_sys_path(tree: str) -> None:
    """pyproject's pythonpath and the editable install put functions/ and the repository root on the path."""
    edits = [f"{p.relative_to(REPO)}:{n}" for p in sorted((REPO / tree).rglob("*.py")) if p != Path(__file__)
             for n, line in enumerate(p.read_text().splitlines(), 1) if SYS_PATH.search(line.split("#", 1)[0])]
    assert edits == []


def test_tests_are_sorted_by_layer() -> None:
    """One axis at the top of tests/: the layer. Engines and surfaces are folders inside a layer."""
    layers = {p.name for p in (REPO / "tests").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert layers == {"architecture", "contract", "e2e", "handlers", "infra", "reliability", "unit"}
