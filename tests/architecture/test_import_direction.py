"""Layering: services and api never import adapters, adapters never import api, handlers stay thin."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "functions"
FORBIDDEN_IN_SERVICES = ("agentkb.adapters", "agentkb.api", "agentkb.local", "boto3", "botocore", "sqlite3",
                         "numpy", "onnxruntime", "os")


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "agentkb" / "services").rglob("*.py")),
                         ids=lambda p: p.relative_to(ROOT / "agentkb" / "services").as_posix())
def test_services_do_not_import_adapters(path: Path) -> None:
    bad = {n for n in imports(path) if any(n == f or n.startswith(f + ".") for f in FORBIDDEN_IN_SERVICES)}
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", sorted((ROOT / "agentkb" / "api").rglob("*.py")),
                         ids=lambda p: p.relative_to(ROOT / "agentkb" / "api").as_posix())
def test_api_does_not_import_adapters(path: Path) -> None:
    bad = {n for n in imports(path) if n == "agentkb.adapters" or n.startswith("agentkb.adapters.")}
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", sorted((ROOT / "agentkb" / "adapters").rglob("*.py")),
                         ids=lambda p: p.relative_to(ROOT / "agentkb" / "adapters").as_posix())
def test_adapters_do_not_import_api(path: Path) -> None:
    bad = {n for n in imports(path) if any(n == f or n.startswith(f + ".") for f in ("agentkb.api", "agentkb.local"))}
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("function", ["search", "recall", "snapshot", "ingest"])
def test_handlers_are_thin(function: str) -> None:
    source = (ROOT / function / "handler.py").read_text()
    assert len(source.splitlines()) <= 40
    assert "boto3" not in source and "sqlite3" not in source


# coldstart_gc.py asks whether it runs in Lambda before pydantic, which config.py needs, is imported (README Decisions)
ENVIRONMENT_READERS = ("config.py", "coldstart_gc.py")


def test_only_config_reads_the_environment() -> None:
    offenders = []
    for path in (ROOT / "agentkb").rglob("*.py"):
        text = path.read_text()
        if path.name not in ENVIRONMENT_READERS and ("os.environ.get(" in text or "os.getenv(" in text):
            offenders.append(path.name)
    assert not offenders
