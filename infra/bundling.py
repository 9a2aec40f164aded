"""Docker-free Lambda bundling: copy the function tree and pip-install Linux wheels into a layer.

`python -m infra.bundling` (what `make build` runs) writes:
  .build/functions/      the code asset (search/ recall/ snapshot/ ingest/ agentkb/)
  .build/deps/python/    the dependency layer: runtime deps from pyproject.toml, manylinux wheels only,
                         minus what the Lambda runtime or the Powertools layer already provide.
  .build/deps-<fn>/python/  a function's own layer: what only that function imports (ingest: pypdf), so the
                         search, recall and snapshot bundles never carry it.
  .build/manifest.json   function -> the distributions its layers carry.
Both are precompiled to bytecode (unchecked-hash .pyc): /var/task and /opt are read-only in Lambda, so without
shipped bytecode every cold start recompiles pydantic and agentkb from source (about 160 ms of the search
function's cold import, built bundle with and without it), and CDK's asset zips reset mtimes, which would
invalidate timestamp .pyc files.
"""

from __future__ import annotations

import argparse
import compileall
import json
import py_compile
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

from infra import constants as c

REPO_ROOT = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".pytest_cache", ".mypy_cache")


def normalize(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    if not match:
        raise ValueError(f"unparseable requirement: {requirement!r}")
    return normalize(match.group(1))


def runtime_requirements(pyproject: Path | None = None) -> list[str]:
    """`[project].dependencies` minus what Lambda/Powertools provide; local-model packages are refused."""
    path = pyproject or REPO_ROOT / "pyproject.toml"
    if not path.exists():
        return []
    with path.open("rb") as handle:
        dependencies = tomllib.load(handle).get("project", {}).get("dependencies", [])
    wanted = [req for req in dependencies if requirement_name(req) not in c.PROVIDED_DISTRIBUTIONS]
    forbidden = sorted({requirement_name(req) for req in wanted} & c.FORBIDDEN_DISTRIBUTIONS)
    if forbidden:
        raise SystemExit(f"runtime dependencies must not include local-model packages: {forbidden}")
    return wanted


def precompile(tree: Path) -> bool:
    """Write unchecked-hash bytecode next to every module of `tree`, when this Python is the Lambda runtime's."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    if running != c.PYTHON_VERSION:
        print(f"warning: building with Python {running}, the functions run {c.PYTHON_VERSION}: no bytecode shipped")
        return False
    ok = compileall.compile_dir(str(tree), quiet=1, workers=0,
                                invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    if not ok:
        raise SystemExit(f"bytecode compilation failed under {tree}")
    return True


def build_functions_asset(root: Path = REPO_ROOT) -> Path:
    """Copy the Lambda code tree into .build/functions (fast: no network)."""
    source, target = root / "functions", root / c.FUNCTIONS_ASSET_DIR
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for package in c.FUNCTION_PACKAGES:
        if (source / package).is_dir():
            shutil.copytree(source / package, target / package, ignore=_IGNORED)
    precompile(target)
    return target


def ensure_placeholder_deps(root: Path = REPO_ROOT, layer: str = c.DEPS_ASSET_DIR) -> Path:
    """An empty layer asset for `bundling=skip` synths (tests, offline synth): never deploy it."""
    target = root / layer / "python"
    target.mkdir(parents=True, exist_ok=True)
    marker = target / "PLACEHOLDER.txt"
    if not any(p for p in target.iterdir() if p != marker):
        marker.write_text(f"bundling=skip placeholder for {Path(layer).name}: run `make build` before `cdk deploy`.\n")
    return target.parent


def build_deps_layer(root: Path = REPO_ROOT, requirements: list[str] | None = None) -> Path:
    """pip-install manylinux wheels for Python 3.11 into .build/deps/python (no Docker, no sdists)."""
    reqs = runtime_requirements(root / "pyproject.toml") if requirements is None else requirements
    layer = root / c.DEPS_ASSET_DIR
    _install_layer(layer, reqs)
    installed = layer_distributions(layer)
    provided = sorted(installed & c.PROVIDED_DISTRIBUTIONS)
    if provided:
        print(f"warning: deps layer also carries runtime-provided packages (pulled transitively): {provided}")
    return layer


def extra_requirement(name: str, pyproject: Path | None = None) -> str:
    """The requirement (version range included) pyproject's extras declare for distribution `name`."""
    with (pyproject or REPO_ROOT / "pyproject.toml").open("rb") as handle:
        extras = tomllib.load(handle).get("project", {}).get("optional-dependencies", {})
    for requirement in (r for group in extras.values() for r in group):
        if requirement_name(requirement) == normalize(name):
            return str(requirement)
    raise SystemExit(f"{name} is in a function's own layer but no extra of pyproject.toml declares it")


def function_layer_dir(function: str, root: Path = REPO_ROOT) -> Path:
    return root / c.FUNCTION_DEPS_ASSET_DIR.format(function=function)


def build_function_layers(root: Path = REPO_ROOT, pip_options: Sequence[str] = ()) -> dict[str, Path]:
    """Each function's own layer (.build/deps-<function>/python): what only that function imports."""
    layers = {}
    for spec in c.FUNCTIONS:
        if spec.own_distributions:
            reqs = [extra_requirement(name, root / "pyproject.toml") for name in spec.own_distributions]
            layers[spec.name] = _install_layer(function_layer_dir(spec.name, root), reqs, pip_options)
    return layers


def _install_layer(layer: Path, requirements: Sequence[str], pip_options: Sequence[str] = ()) -> Path:
    """A fresh layer directory with `requirements` installed under python/, bytecode precompiled."""
    shutil.rmtree(layer, ignore_errors=True)
    target = layer / "python"
    target.mkdir(parents=True)
    if requirements:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--platform", c.PIP_PLATFORM, "--implementation", "cp", "--python-version", c.PYTHON_VERSION,
             "--only-binary=:all:", "--upgrade", "--target", str(target), *pip_options, *requirements],
            check=True,
        )
    for cache in target.rglob("__pycache__"):  # pip's timestamp bytecode: replaced by unchecked-hash below
        shutil.rmtree(cache, ignore_errors=True)
    precompile(target)
    leaked = sorted(layer_distributions(layer) & c.FORBIDDEN_DISTRIBUTIONS)
    if leaked:
        raise SystemExit(f"{layer.name} layer pulled in local-model packages it must not ship: {leaked}")
    return layer


def layer_distributions(layer: Path) -> set[str]:
    """The distributions installed in a layer directory (by their .dist-info folders)."""
    return {normalize(p.name.split("-")[0]) for p in (layer / "python").glob("*.dist-info")}


def bundle_manifest(root: Path = REPO_ROOT) -> dict[str, list[str]]:
    """function -> the distributions its layers carry (the shared deps layer plus its own, when it has one)."""
    shared = layer_distributions(root / c.DEPS_ASSET_DIR)
    return {spec.name: sorted(shared | (layer_distributions(function_layer_dir(spec.name, root))
                                        if spec.own_distributions else set())) for spec in c.FUNCTIONS}


def write_manifest(root: Path = REPO_ROOT) -> Path:
    path = root / c.BUNDLE_MANIFEST
    path.write_text(json.dumps(bundle_manifest(root), indent=2, sort_keys=True) + "\n")
    return path


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def check_sizes(root: Path = REPO_ROOT) -> dict[str, int]:
    """Print the unzipped sizes and refuse a bundle over MAX_UNZIPPED_BYTES."""
    sizes = {name: tree_size(root / path) for name, path in
             (("functions", c.FUNCTIONS_ASSET_DIR), ("deps", c.DEPS_ASSET_DIR))}
    own = {f"deps-{spec.name}": tree_size(function_layer_dir(spec.name, root)) for spec in c.FUNCTIONS
           if spec.own_distributions and function_layer_dir(spec.name, root).is_dir()}
    sizes.update(own)
    total = sizes["functions"] + sizes["deps"] + max(own.values(), default=0)  # the largest one function gets
    for name, size in sizes.items():
        print(f"{name:>12}: {size / 1_048_576:8.2f} MB")
    limit = c.MAX_UNZIPPED_BYTES / 1_048_576
    print(f"{'total':>12}: {total / 1_048_576:8.2f} MB for the largest function (limit {limit:.0f} MB)")
    if total >= c.MAX_UNZIPPED_BYTES:
        raise SystemExit(f"unzipped bundle is {total} bytes, over the {c.MAX_UNZIPPED_BYTES} byte budget")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-deps", action="store_true", help="copy functions only; placeholder deps layer")
    args = parser.parse_args(argv)
    build_functions_asset()
    if args.skip_deps:
        ensure_placeholder_deps()
        for spec in c.FUNCTIONS:
            if spec.own_distributions:
                ensure_placeholder_deps(layer=c.FUNCTION_DEPS_ASSET_DIR.format(function=spec.name))
    else:
        build_deps_layer()
        build_function_layers()
    check_sizes()
    print(f"manifest: {write_manifest().relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
