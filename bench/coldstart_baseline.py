"""A baseline revision for `bench/coldstart.py --first-response --baseline REF`: its bundle answers the same events
in the same interleaved rounds, so a change is measured against what it changes under the same load.

The revision is exported with `git archive` (no worktree, no checkout: the repository's branches do not move) into
`.build/baseline/<commit>/`, built there with its own `infra.bundling`, and recorded with its own
`bench/coldstart_record.py` (a revision that makes fewer AWS calls records fewer). Its processes get the same
environment as this tree's, with its bundle on the path instead.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
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
    _run([sys.executable, str(tree / "bench" / "coldstart_record.py"), str(out)], tree)
    return out


def layout(tree: Path, env: dict[str, str]) -> tuple[dict[str, str], Path]:
    """(environment, working directory) of the baseline bundle: `env` with its bundle on the path instead."""
    functions = tree / ".build" / "functions"
    return {**env, "PYTHONPATH": os.pathsep.join((str(functions), str(tree / ".build" / "deps" / "python")))}, \
        functions
