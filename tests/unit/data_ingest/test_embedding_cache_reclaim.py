"""The embedded embedding cache keeps exactly the vectors some chunk still has (sqlite_embedding_cache.py): deleting
or replacing documents and deleting knowledge bases releases the rest in the same transaction; text another KB still
holds keeps its vector (a later ingest of it hits the cache); `agentkb kb sweep-cache` removes older orphans."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.embedded.sqlite.embedding_cache import SWEEP_GRACE_S, vector_key
from agentkb.cli.main import main


@pytest.fixture()
def cli(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def run(*argv: str) -> Any:
        code = main([*argv, "--data-dir", str(data_dir)])
        out = capsys.readouterr().out
        assert code == 0, out
        return json.loads(out) if "--json" in argv else out

    for kb in ("docs", "other"):
        run("kb", "create", "--workspace", "w", "--name", kb)
    return run


def db(data_dir: Path) -> sqlite3.Connection:
    [path] = list(data_dir.rglob("*.sqlite3"))
    return sqlite3.connect(path)


def cached(data_dir: Path) -> dict[str, int]:
    return dict(db(data_dir).execute("SELECT content_hash, created FROM embedding_cache").fetchall())


def referenced(data_dir: Path) -> set[str]:
    return {vector_key(c, x) for c, x in db(data_dir).execute("SELECT content, context FROM chunks")}


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def ingest(cli: Any, kb: str, *args: str) -> dict[str, Any]:
    return cli("ingest", "--workspace", "w", "--kb", kb, "--quiet", "--json", *args)  # type: ignore[no-any-return]


def test_deleting_and_replacing_documents_and_kbs_releases_exactly_the_unused_vectors(
        cli: Any, data_dir: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    write(src / "alpha.md", "# Alpha\n\nThe alpha service rotates its keys every night.")
    write(src / "shared.md", "# Shared\n\nEvery service logs to the central collector.")
    ingest(cli, "docs", str(src))
    shared_copy = write(tmp_path / "copy" / "shared.md", "# Shared\n\nEvery service logs to the central collector.")
    ingest(cli, "other", str(shared_copy))
    assert set(cached(data_dir)) == referenced(data_dir) and len(cached(data_dir)) == 2  # shared text: one vector
    # A replaced document releases its old text's vector
    write(src / "alpha.md", "# Alpha\n\nThe alpha service rotates its keys every hour now.")
    assert ingest(cli, "docs", str(src))["updated"] == 1
    assert set(cached(data_dir)) == referenced(data_dir) and len(cached(data_dir)) == 2
    # A pruned (deleted) document releases its vector, unless another KB still holds the text
    (src / "shared.md").unlink()
    assert ingest(cli, "docs", "--prune", str(src))["removed"] == 1
    assert set(cached(data_dir)) == referenced(data_dir) and len(cached(data_dir)) == 2
    # A deleted KB releases what only it held
    cli("kb", "delete", "docs", "--workspace", "w", "--yes")
    assert set(cached(data_dir)) == referenced(data_dir) and len(cached(data_dir)) == 1
    # And the same text ingested again still hits the cache (its row is the one written first, not a new one)
    before = cached(data_dir)
    again = write(tmp_path / "again" / "shared.md", "# Shared\n\nEvery service logs to the central collector.")
    cli("kb", "create", "--workspace", "w", "--name", "third")
    ingest(cli, "third", str(again))
    assert cached(data_dir) == before and referenced(data_dir) == set(before)


def test_the_sweep_removes_old_orphans_only(cli: Any, data_dir: Path, tmp_path: Path) -> None:
    ingest(cli, "docs", str(write(tmp_path / "a.md", "# A\n\nA note that stays.")))
    live = set(cached(data_dir))
    conn = db(data_dir)
    now = int(time.time())
    with conn:  # orphans: one from before this version (created 0), one an hour old, one an ingest just embedded
        conn.execute("UPDATE embedding_cache SET created = 0")  # the live row is old too: kept for its chunk
        conn.executemany("INSERT INTO embedding_cache (profile, content_hash, vector, created) VALUES (?, ?, ?, ?)",
                         [("m@384", "a" * 64, b"\0" * 16, 0), ("m@384", "b" * 64, b"\0" * 16, now - SWEEP_GRACE_S - 1),
                          ("m@384", "c" * 64, b"\0" * 16, now)])
    done = cli("kb", "sweep-cache", "--json")
    assert (done["examined"], done["removed"]) == (3, 2)
    assert set(cached(data_dir)) == live | {"c" * 64}
    assert cli("kb", "sweep-cache", "--json")["removed"] == 0


def test_the_release_finds_a_texts_chunks_by_the_hash_prefix_index_and_older_files_get_it(tmp_path: Path) -> None:
    """The release's lookup (`SAME_TEXT`) searches the prefix index, never scans the chunks (a scan per dropped
    chunk at a million chunks); a database made with the whole-hash index loses it and gains the prefix one."""
    from agentkb.adapters.embedded.sqlite.db import Database
    from agentkb.adapters.embedded.sqlite.embedding_cache import SAME_TEXT

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as old:  # what an earlier version left: the chunks table and the whole-hash index
        old.execute("CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, workspace_id TEXT"
                    " NOT NULL, knowledge_base_id TEXT NOT NULL, document_id TEXT NOT NULL, chunk_index INTEGER NOT"
                    " NULL, content TEXT NOT NULL, token_count INTEGER NOT NULL, content_hash TEXT NOT NULL,"
                    " embedding BLOB)")
        old.execute("CREATE INDEX chunks_content_hash ON chunks (content_hash)")
    conn = Database(path).connection()
    indexes = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'chunks'")}
    assert "chunks_text_key" in indexes and "chunks_content_hash" not in indexes
    plan = " ".join(str(r[-1]) for r in conn.execute(
        f"EXPLAIN QUERY PLAN SELECT 1 FROM chunks WHERE {SAME_TEXT} AND context = ?", ("ab" * 32, "ab" * 32, "")))
    assert "USING INDEX chunks_text_key" in plan and "SCAN" not in plan, plan
    digest = "0123456789ab" + "f" * 52
    conn.execute("INSERT INTO chunks (id, workspace_id, knowledge_base_id, document_id, chunk_index, content,"
                 " token_count, content_hash) VALUES ('c', 'w', 'k', 'd', 0, 'x', 1, ?)", (digest,))
    same_prefix = "0123456789ab" + "e" * 52  # the prefix finds it; the whole hash decides
    count = f"SELECT count(*) FROM chunks WHERE {SAME_TEXT} AND context = ''"
    assert conn.execute(count, (digest, digest)).fetchone()[0] == 1
    assert conn.execute(count, (same_prefix, same_prefix)).fetchone()[0] == 0
