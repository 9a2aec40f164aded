"""Issues 25 and 26: an import killed with SIGKILL halfway leaves the archive intact, and the next run finishes it:
every record once, verified, nothing written twice. Killed after its first bulk write committed (one document a
batch), or inside a bulk write's transaction after its rows and logs went in but before COMMIT (the change-log
triggers the bulk path drops inside that transaction come back with the rollback)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentkb.cli.main import main
from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from testkit.corpus import WS, seed

ROOT = Path(__file__).resolve().parents[2]
# The importer's process, killed by itself (SIGKILL: no cleanup, no flush) where the case says.
KILLED_IMPORT = """
import os, signal, sys
from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.sqlite import bulk_load
from agentkb.services.portability import sinks
def then_die(real):
    def run(*args, **kwargs):
        real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGKILL)
    return run
if sys.argv[2] == "after-commit":
    sinks.BULK_CHUNKS = 1  # one document a batch: the first batch commits, then the kill
    SqliteIndex.write_documents = then_die(SqliteIndex.write_documents)
else:  # inside the batch's transaction: rows, logs and triggers written, not committed
    bulk_load.load_new = then_die(bulk_load.load_new)
from agentkb.cli.main import main
sys.exit(main(["import", sys.argv[1], "--quiet"]))
"""


@pytest.mark.parametrize(("kill", "committed"), [("after-commit", 1), ("before-commit", 0)])
def test_an_import_killed_halfway_finishes_on_the_next_run(kill: str, committed: int, tmp_path: Path,
                                                          data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    seed(get_ports(), snapshot=True)
    archive = tmp_path / "ws.jsonl"
    assert main(["export", "--workspace", WS, "--out", str(archive)]) == 0
    exported = archive.read_bytes()
    target = tmp_path / "target"
    env = {**os.environ, "AGENTKB_DATA_DIR": str(target), "AGENTKB_BACKEND": "embedded",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)])}
    killed = subprocess.run([sys.executable, "-c", KILLED_IMPORT, str(archive), kill], env=env,
                            capture_output=True, timeout=600, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    assert archive.read_bytes() == exported  # the source is untouched

    monkeypatch.setenv("AGENTKB_DATA_DIR", str(target))
    reset_settings()
    reset_ports()
    capsys.readouterr()
    assert main(["import", str(archive), "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    sections = report["sections"]
    assert sections["documents"]["present"] == committed  # what the killed run committed is not written again
    for name, s in sections.items():
        if name != "keys":
            assert s["written"] + s["present"] == s["archive"] and s["verified"], (name, s)
    conn = sqlite3.connect(target / "agentkb.sqlite3")
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"chunks_vector_ai", "chunks_lexical_insert"} <= triggers  # never left dropped by the kill
    chunks = conn.execute("SELECT count(*), count(DISTINCT id) FROM chunks").fetchone()
    logged = conn.execute("SELECT count(DISTINCT chunk_rowid) FROM vector_log").fetchone()[0]
    conn.close()
    assert chunks == (sections["chunks"]["archive"],) * 2 and logged == chunks[0]  # each chunk once, each logged
