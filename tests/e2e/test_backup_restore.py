"""Issue 25: `agentkb backup` takes a consistent copy while writes go on (every write acknowledged before it began is
in it), `agentkb restore` refuses a non-empty target unless --force and rebuilds the BM25 indexes, keys keep working;
a backup killed with SIGKILL leaves the source intact and no backup file, and a re-run completes."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentkb.cli.main import main
from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.local.operator import OPERATOR, create_kb, deps
from agentkb.models.domain import IndexQuery
from agentkb.models.ingest import AddDocumentRequest
from agentkb.services.access.api_keys import authenticate
from agentkb.services.ingest.service import add_document
from testkit.bedrock import hashed_embedding
from testkit.corpus import mint

ROOT = Path(__file__).resolve().parents[2]
KILLED_BACKUP = """
import os, signal, sys, tarfile
real = tarfile.TarFile.add
def add_then_die(self, *args, **kwargs):
    real(self, *args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
tarfile.TarFile.add = add_then_die
from agentkb.cli.main import main
sys.exit(main(["backup", "--out", sys.argv[1]]))
"""


class Hashed:
    model_id, dimension = "hashed-32", 32

    def embed_query(self, text: str) -> list[float]:
        return hashed_embedding(text, 32)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [hashed_embedding(t, 32) for t in texts]


def _use(monkeypatch: pytest.MonkeyPatch, data: Path) -> Any:
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(data))
    reset_settings()
    reset_ports()
    return get_ports().replace(embedder=Hashed())


def _write(ports: Any, kb_id: str, i: int) -> None:
    add_document(kb_id, AddDocumentRequest(workspaceId="ws1", name=f"d{i}.md", content=f"Note {i}: word{i}x."),
                 OPERATOR, deps(ports))


def test_a_backup_taken_during_writes_restores_every_acknowledged_write(tmp_path: Path, data_dir: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ports = get_ports().replace(embedder=Hashed())
    kb = create_kb(ports, "ws1", "notes", None, [])
    key = mint(ports, ["ws1"], ["api:read"], "alice")
    acknowledged: list[int] = []
    stop, first = threading.Event(), threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            _write(ports, kb.id, i)
            acknowledged.append(i)
            if i >= 5:
                first.set()
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    first.wait(60)
    before = list(acknowledged)  # acknowledged before the backup began
    out = tmp_path / "b.tar.gz"
    assert main(["backup", "--out", str(out)]) == 0
    stop.set()
    thread.join(60)

    target = tmp_path / "restored"
    assert main(["restore", str(out), "--data-dir", str(target)]) == 0
    restored = _use(monkeypatch, target)
    kb_restored = restored.catalog.get_knowledge_base("ws1", kb.id)
    assert kb_restored is not None
    for i in before:
        assert restored.catalog.find_document_by_name(kb.id, f"d{i}.md") is not None, i
        hits = restored.index.lexical_search(IndexQuery("ws1", (kb.id,), text=f"word{i}x", limit_per_kb=3))
        assert hits, i  # the BM25 index was rebuilt from SQLite
    assert authenticate(restored.keys, restored.secrets, key).id == "alice"  # the pepper came back too

    (target / "marker").write_text("keep me")
    assert main(["restore", str(out), "--data-dir", str(target)]) == 2  # refuses a data dir that holds data
    assert (target / "marker").exists()
    assert main(["restore", str(out), "--data-dir", str(target), "--force"]) == 0
    assert not (target / "marker").exists()


def test_a_backup_killed_midway_leaves_the_source_intact_and_a_rerun_completes(tmp_path: Path, data_dir: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    ports = get_ports().replace(embedder=Hashed())
    kb = create_kb(ports, "ws1", "notes", None, [])
    for i in range(20):
        _write(ports, kb.id, i)
    source = data_dir / "agentkb.sqlite3"
    out = tmp_path / "b.tar.gz"
    env = {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "AGENTKB_BACKEND": "embedded",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)])}
    killed = subprocess.run([sys.executable, "-c", KILLED_BACKUP, str(out)], env=env, capture_output=True,
                            timeout=300, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()[-2000:]
    assert not out.exists()  # only the .partial file, never one that looks whole
    with sqlite3.connect(source) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == 20
    assert main(["backup", "--out", str(out)]) == 0
    assert main(["restore", str(out), "--data-dir", str(tmp_path / "restored")]) == 0
    restored = _use(monkeypatch, tmp_path / "restored")
    assert len(restored.catalog.list_documents(kb.id, 100)[0]) == 20
