"""A baseline revision for `python -m bench.coldstart.run --first-response --baseline REF`: its bundle answers the
same events in the same interleaved rounds, so a change is measured against what it changes under the same load.

The revision is exported with `git archive` (no worktree, no checkout: the repository's branches do not move) into
`.build/baseline/<commit>/`, built there with its own `infra.bundling`, and recorded with its own recorder
(a revision that makes fewer AWS calls records fewer) over its own functions/. Its processes get the same
environment as this tree's, with its bundle on the path instead. A revision from before bench/ was a package
(flat `bench/coldstart_*.py` scripts) is run in its own layout.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench_module(tree: Path, name: str) -> list[str]:
    """The interpreter arguments that run `tree`'s cold-start module `name` (record, ...) with `tree` as cwd."""
    if (tree / "bench" / "coldstart" / f"{name}.py").exists():
        return ["-m", f"bench.coldstart.{name}"]
    return [str(tree / "bench" / f"coldstart_{name}.py")]


def net_module(tree: Path) -> Path:
    """`tree`'s network stub (bench/coldstart/net.py, or bench/coldstart_net.py before bench/ was a package)."""
    packaged = tree / "bench" / "coldstart" / "net.py"
    return packaged if packaged.exists() else tree / "bench" / "coldstart_net.py"


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:3])} failed in {cwd}:\n{done.stderr[-3000:]}")
    return done.stdout


def prepare(ref: str) -> Path:
    """The exported and built tree of `ref` (reused when this commit was prepared before)."""
    commit = _run(["git", "rev-parse", "--verify", f"{ref}^{{commit}}"], ROOT).strip()
    tree = ROOT / ".build" / "baseline" / commit
    if not (tree / ".build" / "manifest.json").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        _run([sys.executable, "-m", "infra.bundling"], tree)
    return tree


def record(tree: Path) -> Path:
    """The baseline's own recording of the three first requests (made on every bench run, like this tree's)."""
    out = tree / ".build" / "coldstart-recording.json"
    own = {**os.environ, "PYTHONPATH": os.pathsep.join((str(tree / "functions"), str(tree)))}  # its agentkb, not ours
    _run([sys.executable, *bench_module(tree, "record"), str(out)], tree, own)
    return out


def layout(tree: Path, env: dict[str, str]) -> tuple[dict[str, str], Path]:
    """(environment, working directory) of the baseline bundle: `env` with its bundle on the path instead."""
    functions = tree / ".build" / "functions"
    return {**env, "PYTHONPATH": os.pathsep.join((str(functions), str(tree / ".build" / "deps" / "python")))}, \
        functions
