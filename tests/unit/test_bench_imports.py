"""Benchmarks import no test module and no pytest: `make bench` installs the local extra only, and a benchmark that
reached into tests/ failed after minutes of embedding. What a benchmark shares with the tests (the AWS doubles) lives
in testkit/ (bench/README.md, "The AWS test doubles")."""

from __future__ import annotations

import ast
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def imported(path: Path) -> set[str]:
    """Top-level names of every module `path` imports, at module level or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def modules_of_the_tests() -> set[str]:
    """What a benchmark would be importing from tests/ (a name bench/, functions/, the repository root or an
    installed distribution also defines is theirs: tests/mcp is not the MCP SDK)."""
    ours = ({p.stem for p in BENCH.rglob("*.py")} | {p.name for p in (ROOT / "functions").iterdir()}
            | {p.name for p in ROOT.iterdir()} | set(packages_distributions()))
    in_tests = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {p.name for p in (ROOT / "tests").rglob("*")
                                                                   if p.is_dir()}
    return (in_tests - ours) | {"tests", "conftest", "pytest"}


def test_no_benchmark_imports_a_test_module_or_pytest() -> None:
    forbidden = modules_of_the_tests()
    found = {path.relative_to(ROOT).as_posix(): sorted(imported(path) & forbidden)
             for path in sorted(BENCH.rglob("*.py"))}
    assert {name: hits for name, hits in found.items() if hits} == {}

