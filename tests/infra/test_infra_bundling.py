"""Docker-free bundling: runtime deps from pyproject, no local-model packages, code tree copy, size budget."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from infra import bundling
from infra import constants as c


def write_pyproject(root: Path, deps: list[str]) -> Path:
    path = root / "pyproject.toml"
    path.write_text("[project]\nname='x'\nversion='0'\ndependencies = [" + ", ".join(repr(d) for d in deps) + "]\n")
    return path


def test_runtime_requirements_drop_what_lambda_and_powertools_provide(tmp_path):
    path = write_pyproject(tmp_path, ["aws-lambda-powertools[tracer]==3.37.0", "boto3>=1.34", "botocore",
                                      "pydantic==2.14.4", "opensearch-py>=2; python_version>='3.11'"])
    assert bundling.runtime_requirements(path) == ["pydantic==2.14.4", "opensearch-py>=2; python_version>='3.11'"]


def test_local_model_packages_are_refused(tmp_path):
    path = write_pyproject(tmp_path, ["pydantic", "onnxruntime>=1.17"])
    with pytest.raises(SystemExit, match="onnxruntime"):
        bundling.runtime_requirements(path)


def test_the_projects_runtime_deps_are_lambda_safe():
    names = {bundling.requirement_name(r) for r in bundling.runtime_requirements()}
    assert not names & c.FORBIDDEN_DISTRIBUTIONS
    assert not names & c.PROVIDED_DISTRIBUTIONS
    assert "numpy" not in names


def test_functions_asset_copies_the_tree_with_fresh_unchecked_hash_bytecode(tmp_path):
    for package in ("search", "agentkb/api"):
        (tmp_path / "functions" / package).mkdir(parents=True)
        (tmp_path / "functions" / package / "mod.py").write_text("x = 1\n")
    (tmp_path / "functions" / "search" / "__pycache__").mkdir()
    stale = tmp_path / "functions" / "search" / "__pycache__" / f"mod.{sys.implementation.cache_tag}.pyc"
    stale.write_bytes(b"\0")
    (tmp_path / "functions" / "stray").mkdir()
    target = bundling.build_functions_asset(tmp_path)
    assert (target / "search" / "mod.py").is_file()
    assert (target / "agentkb" / "api" / "mod.py").is_file()
    assert not (target / "stray").exists()
    compiled = sorted(target.rglob("*.pyc"))
    assert [p.parent.parent.name for p in compiled] == ["api", "search"]
    for pyc in compiled:  # flags word 0b01: hash-based, unchecked (survives the asset zip's reset mtimes)
        header = pyc.read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER and int.from_bytes(header[4:8], "little") == 0b01


def test_no_bytecode_is_shipped_for_another_python(tmp_path, monkeypatch, capsys):
    (tmp_path / "functions" / "search").mkdir(parents=True)
    (tmp_path / "functions" / "search" / "mod.py").write_text("x = 1\n")
    monkeypatch.setattr(c, "PYTHON_VERSION", "3.99")
    target = bundling.build_functions_asset(tmp_path)
    assert not list(target.rglob("*.pyc"))
    assert "no bytecode shipped" in capsys.readouterr().out


def test_deps_layer_layout_and_size_check(tmp_path, monkeypatch, capsys):
    (tmp_path / "functions" / "search").mkdir(parents=True)
    bundling.build_functions_asset(tmp_path)
    layer = bundling.build_deps_layer(tmp_path, requirements=[])  # no network: layout only
    assert (layer / "python").is_dir()
    sizes = bundling.check_sizes(tmp_path)
    assert set(sizes) == {"functions", "deps"}
    assert "limit 100 MB" in capsys.readouterr().out
    (layer / "python" / "big.bin").write_bytes(b"\0" * 2048)
    monkeypatch.setattr(c, "MAX_UNZIPPED_BYTES", 1024)
    with pytest.raises(SystemExit, match="over the"):
        bundling.check_sizes(tmp_path)


def test_placeholder_deps_only_fill_an_empty_layer(tmp_path):
    layer = bundling.ensure_placeholder_deps(tmp_path)
    assert (layer / "python" / "PLACEHOLDER.txt").is_file()
