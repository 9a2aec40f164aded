"""Issue 25: an import killed with SIGKILL halfway (after its first document write) leaves the archive intact, and
the next run finishes it: every record once, verified, nothing written twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentkb.cli.main import main
from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from testkit.corpus import WS, seed

ROOT = Path(__file__).resolve().parents[2]
# The importer's process, killed by itself (SIGKILL: no cleanup, no flush) right after its first document commit.
KILLED_IMPORT = """
import os, signal, sys
from agentkb.adapters.embedded.index import SqliteIndex
real = SqliteIndex.write_document
def write_then_die(self, *args, **kwargs):
    real(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
SqliteIndex.write_document = write_then_die
from agentkb.cli.main import main
sys.exit(main(["import", sys.argv[1], "--quiet"]))
"""


def test_an_import_killed_halfway_finishes_on_the_next_run(tmp_path: Path, data_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    seed(get_ports(), snapshot=True)
    archive = tmp_path / "ws.jsonl"
    assert main(["export", "--workspace", WS, "--out", str(archive)]) == 0
    exported = archive.read_bytes()
    target = tmp_path / "target"
    env = {**os.environ, "AGENTKB_DATA_DIR": str(target), "AGENTKB_BACKEND": "embedded",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)])}
    killed = subprocess.run([sys.executable, "-c", KILLED_IMPORT, str(archive)], env=env, capture_output=True,
                            timeout=600, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    assert archive.read_bytes() == exported  # the source is untouched

    monkeypatch.setenv("AGENTKB_DATA_DIR", str(target))
    reset_settings()
    reset_ports()
    capsys.readouterr()
    assert main(["import", str(archive), "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    sections = report["sections"]
    assert sections["documents"]["present"] == 1  # the killed run's one committed document, not written again
    for name, s in sections.items():
        if name != "keys":
            assert s["written"] + s["present"] == s["archive"] and s["verified"], (name, s)
