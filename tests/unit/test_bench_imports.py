"""Benchmarks import no test module and no pytest: `make bench` installs the local extra only, and a benchmark that
reached into tests/ failed after minutes of embedding. What a benchmark shares with the tests (the AWS doubles) lives
in testkit/ (bench/README.md, "The AWS test doubles"). bench/ is a package run from the repository root
(`python -m bench.<question>.<script>`): no benchmark edits the import path, and every module imports."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
# What a benchmark may import from this repository: the package, the handlers, the doubles, the vendored contracts,
# infra's constants (the stack's environment), and the bench package itself.
FIRST_PARTY_ALLOWED = {"agentkb", "search", "recall", "snapshot", "ingest", "testkit", "contracts", "infra", "bench"}
# Drivers of OB1's own clients: scripts that run against a copy of OB1's plugin (FSL, not in the repository).
EXTERNAL_DRIVERS = {"bench/ob1/clients/hermes_drive.py"}


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
    """What a benchmark would be importing from tests/ (a name functions/, the repository root or an installed
    distribution also defines is theirs: tests/e2e/mcp is not the MCP SDK)."""
    ours = ({p.name for p in (ROOT / "functions").iterdir()} | {p.name for p in ROOT.iterdir()}
            | set(packages_distributions()))
    in_tests = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {p.name for p in (ROOT / "tests").rglob("*")
                                                                   if p.is_dir()}
    return (in_tests - ours) | {"tests", "conftest", "pytest"}


def benchmarks() -> list[Path]:
    return sorted(BENCH.rglob("*.py"))


def test_no_benchmark_imports_a_test_module_or_pytest() -> None:
    forbidden = modules_of_the_tests()
    found = {path.relative_to(ROOT).as_posix(): sorted(imported(path) & forbidden) for path in benchmarks()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_benchmarks_import_only_the_package_the_doubles_and_each_other() -> None:
    first_party = ({p.name.removesuffix(".py") for p in ROOT.iterdir()}
                   | {p.name for p in (ROOT / "functions").iterdir()})
    found = {path.relative_to(ROOT).as_posix(): sorted(imported(path) & first_party - FIRST_PARTY_ALLOWED)
             for path in benchmarks()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_no_benchmark_edits_the_import_path() -> None:
    def edits(path: Path) -> bool:
        return any(isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name)
                   and node.value.id == "sys" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))

    assert [path.relative_to(ROOT).as_posix() for path in benchmarks() if edits(path)] == []


def test_every_benchmark_module_imports_from_the_repository_root() -> None:
    # Given every module of the package, as `python -m` names it (the drivers of OB1's clients run elsewhere)
    modules = [".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for path in benchmarks() if path.relative_to(ROOT).as_posix() not in EXTERNAL_DRIVERS]
    # When a fresh interpreter imports them all from the repository root, Then none fails (a moved module, a
    # stale import between benchmarks)
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKB_")}
    done = subprocess.run([sys.executable, "-c", code, *modules], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
