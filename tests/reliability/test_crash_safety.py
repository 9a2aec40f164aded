"""Crash safety with real kills: SIGKILL the CLI or the server mid-ingest, re-run, and every file is there once.

"Whole or absent": a document's record, chunks, vectors and FTS rows are one transaction, so a kill at any point
leaves no half-indexed document; the re-run skips what was written (content hash) and finishes the rest.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
FILES = 24


def _env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "AGENTKB_DATA_DIR": str(data_dir), "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), os.environ.get("PYTHONPATH", "")])}


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkb.cli.main", *args], env=_env(data_dir), capture_output=True,
                          text=True, timeout=900, check=False)


def _corpus(folder: Path) -> None:
    for i in range(FILES):
        body = " ".join(f"Section {i}.{j}: the {['ferry', 'train', 'bus', 'tram'][j % 4]} to stop {j} runs every "
                        f"{(i + j) % 9 + 2} minutes on weekdays." for j in range(60))
        (folder / f"sub{i % 3}" / f"route-{i:02d}.md").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"sub{i % 3}" / f"route-{i:02d}.md").write_text(body, encoding="utf-8")


def _documents(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db, timeout=30) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM documents").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def assert_whole(db: Path) -> dict[str, int]:
    """Every document's chunks are all there (count, vectors, BM25 entries); no chunk without its document."""
    with sqlite3.connect(db) as conn:
        docs = conn.execute("SELECT id, name, chunk_count, status FROM documents").fetchall()
        for doc_id, name, chunk_count, status in docs:
            stored, vectors = conn.execute("SELECT count(*), count(embedding) FROM chunks WHERE document_id = ?",
                                           (doc_id,)).fetchone()
            expected = chunk_count if status == "ready" else stored  # an `indexing` record may keep older chunks
            assert stored == vectors == expected, (name, status, chunk_count, stored, vectors)
        orphans = conn.execute("SELECT count(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)")
        assert orphans.fetchone()[0] == 0
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        names = [n for _, n, _, _ in docs]
        assert len(names) == len(set(names))
    assert _lexical_entries(db) == chunks  # the BM25 index beside SQLite catches up to exactly its chunks
    return {"documents": len(docs), "chunks": chunks}


def _lexical_entries(db: Path) -> int:
    from agentkb.adapters.embedded.index import SqliteIndex
    from agentkb.adapters.embedded.sqlite.db import Database

    index = SqliteIndex(Database(db))
    index.lexical.refresh_all()
    kbs = [r[0] for r in index.db.connection().execute("SELECT id FROM knowledge_bases")]
    return sum(int(index.lexical.of(kb).chunks.index.searcher().num_docs) - 1 for kb in kbs)  # less the stamps


@pytest.mark.parametrize("kill_after_documents", [0, 3, 11])
def test_killing_the_cli_mid_ingest_then_rerunning_finishes_the_job(tmp_path: Path, kill_after_documents: int) -> None:
    data_dir, folder = tmp_path / "data", tmp_path / "routes"
    _corpus(folder)
    assert _cli(data_dir, "kb", "create", "--workspace", "w", "--name", "routes").returncode == 0
    db = data_dir / "agentkb.sqlite3"
    proc = subprocess.Popen([sys.executable, "-m", "agentkb.cli.main", "ingest", "--workspace", "w", "--kb", "routes",
                             "--quiet", str(folder)], env=_env(data_dir), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while _documents(db) < kill_after_documents and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if kill_after_documents == 0:
        time.sleep(1.0)  # mid-start: model loading or the first embedding batch
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    partial = assert_whole(db)
    assert partial["documents"] < FILES, "the run finished before the kill: nothing was tested"
    rerun = _cli(data_dir, "ingest", "--workspace", "w", "--kb", "routes", "--quiet", "--json", str(folder))
    assert rerun.returncode == 0, rerun.stderr
    summary = json.loads(rerun.stdout)
    assert summary["created"] == FILES - partial["documents"] and summary["unchanged"] == partial["documents"]
    assert (summary["updated"], summary["failed"], summary["conflicts"]) == (0, [], [])
    assert assert_whole(db)["documents"] == FILES


def _call(base: str, key: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                     method=method, headers={"X-API-Key": key, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.status, json.loads(response.read() or b"null")


def _serve(data_dir: Path, log: Path) -> tuple[subprocess.Popen[str], str]:
    out = log.open("w")
    proc = subprocess.Popen([sys.executable, "-m", "agentkb.cli.main", "serve", "--port", "0"], env=_env(data_dir),
                            stdout=out, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:(\d+)", log.read_text())
        if found:
            return proc, f"http://127.0.0.1:{found.group(1)}"
        assert proc.poll() is None, log.read_text()
        time.sleep(0.05)
    raise AssertionError("agentkb serve did not start")


def test_killing_the_server_mid_index_resumes_after_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    assert _cli(data_dir, "kb", "create", "--workspace", "w", "--name", "big").returncode == 0
    key = _cli(data_dir, "keys", "create", "--workspace", "w", "--scope", "api:read", "--scope", "api:write").stdout
    key = key.strip()
    kb = _cli(data_dir, "kb", "list", "--workspace", "w").stdout.split("\t")[0]
    text = " ".join(f"Paragraph {i}: the night ferry to harbour {i % 40} carries {i * 3} cars in winter."
                    for i in range(900))  # well over the 201 limit: indexed in the background
    proc, base = _serve(data_dir, tmp_path / "serve1.log")
    try:
        status, accepted = _call(base, key, "POST", f"/api/v2/knowledge/bases/{kb}/documents",
                                 {"workspaceId": "w", "name": "ferries.md", "content": text})
        assert status == 202
        time.sleep(1.5)  # the worker is embedding now
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    doc_path = f"/api/v2/knowledge/bases/{kb}/documents/{accepted['data']['id']}?workspaceId=w"
    assert assert_whole(data_dir / "agentkb.sqlite3")["chunks"] == 0  # nothing half-written
    proc, base = _serve(data_dir, tmp_path / "serve2.log")
    try:
        deadline = time.monotonic() + 600
        while (_call(base, key, "GET", doc_path)[1]["data"]["status"] == "indexing"
               and time.monotonic() < deadline):
            time.sleep(0.5)
        shown = _call(base, key, "GET", doc_path)[1]["data"]
        assert shown["status"] == "ready" and shown["chunkCount"] > 20
        _, found = _call(base, key, "POST", "/api/v2/knowledge/search",
                         {"workspaceId": "w", "knowledgeBaseIds": [kb], "query": "night ferry harbour"})
        assert found["data"]["results"][0]["documentName"] == "ferries.md"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert assert_whole(data_dir / "agentkb.sqlite3") == {"documents": 1, "chunks": shown["chunkCount"]}
