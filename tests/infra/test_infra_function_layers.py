"""pypdf ships in the ingest function's own layer only: search, recall and snapshot never carry a PDF parser.

The bundle test installs the ingest layer with the real pip command of `make build`, offline: the pypdf wheel is
rebuilt from this environment's installed copy (pure Python) into a local wheelhouse.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import zipfile
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import pytest

from infra import bundling
from infra import constants as c

OTHERS = ("search", "recall", "snapshot")


def _layer_refs(function: dict[str, Any]) -> list[str]:
    return [layer["Ref"] for layer in function["Properties"]["Layers"] if isinstance(layer, dict) and "Ref" in layer]


def test_only_the_ingest_function_takes_the_layer_holding_pypdf(synthesized):
    resources = synthesized.api_json["Resources"]
    functions = {r["Properties"]["Handler"].split(".")[0]: r for r in resources.values()
                 if r["Type"] == "AWS::Lambda::Function" and "Handler" in r["Properties"]}
    own = {name for name, r in resources.items()
           if r["Type"] == "AWS::Lambda::LayerVersion" and "IngestDepsLayer" in name}
    assert len(own) == 1
    assert own <= set(_layer_refs(functions["ingest"]))
    for name in OTHERS:
        assert not own & set(_layer_refs(functions[name])), name
    # the layer's staged asset is .build/deps-ingest (placeholder or built), not the shared deps layer
    assets = json.loads((synthesized.outdir / f"{synthesized.api_stack.artifact_id}.assets.json").read_text())
    asset_hash = resources[own.pop()]["Properties"]["Content"]["S3Key"].split(".")[0]
    staged = synthesized.outdir / assets["files"][asset_hash]["source"]["path"]
    source = bundling.function_layer_dir("ingest")
    assert sorted(p.relative_to(staged) for p in staged.rglob("*")) == sorted(
        p.relative_to(source) for p in source.rglob("*"))


def _wheelhouse(tmp_path: Path) -> Path:
    """This environment's installed pypdf packed back into a py3-none-any wheel (pypdf is pure Python)."""
    dist = distribution("pypdf")
    house = tmp_path / "wheels"
    house.mkdir()
    info = f"pypdf-{dist.version}.dist-info"
    files = [f for f in dist.files or () if "__pycache__" not in f.parts and f.parts[0] in ("pypdf", info)
             and f.name not in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")]
    record = []
    with zipfile.ZipFile(house / f"pypdf-{dist.version}-py3-none-any.whl", "w") as wheel:
        for file in files:
            data = Path(str(dist.locate_file(file))).read_bytes()
            wheel.writestr(str(file), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{file},sha256={digest},{len(data)}")
        wheel.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")
    return house


def test_make_build_puts_pypdf_in_the_ingest_layer_and_nowhere_else(tmp_path, monkeypatch):
    # Given the project's pyproject (pypdf's version range lives in an extra) and a local wheelhouse
    shutil.copy(bundling.REPO_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    calls: list[list[str]] = []
    real_run = subprocess.run

    def run(command: list[str], **kwargs: Any) -> Any:
        calls.append(command)
        return real_run(command, **kwargs)

    monkeypatch.setattr(bundling.subprocess, "run", run)
    # When the layers are built as `make build` builds them (the shared one offline: layout only)
    bundling.build_deps_layer(tmp_path, requirements=[])
    layers = bundling.build_function_layers(tmp_path, ["--no-index", "--find-links", str(_wheelhouse(tmp_path))])
    # Then pip installed pypdf's declared range into the ingest layer, for the Lambda platform
    [command] = calls
    assert bundling.extra_requirement("pypdf") in command and c.PIP_PLATFORM in command
    assert set(layers) == {"ingest"}
    assert (layers["ingest"] / "python" / "pypdf" / "__init__.py").is_file()
    assert list((layers["ingest"] / "python" / "pypdf").glob("__pycache__/*.pyc"))  # shipped bytecode
    # And the manifest says only the ingest function can import it
    manifest = json.loads(bundling.write_manifest(tmp_path).read_text())
    assert "pypdf" in manifest["ingest"]
    assert all("pypdf" not in manifest[name] for name in OTHERS)
    assert "deps-ingest" in bundling.check_sizes(tmp_path)


def test_a_function_layer_package_must_be_declared_in_an_extra(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\nversion='0'\n[project.optional-dependencies]\n"
                                             "local = ['pypdf>=7.1,<8']\n")
    assert bundling.extra_requirement("PyPDF", tmp_path / "pyproject.toml") == "pypdf>=7.1,<8"
    with pytest.raises(SystemExit, match="no extra"):
        bundling.extra_requirement("pdfminer", tmp_path / "pyproject.toml")
