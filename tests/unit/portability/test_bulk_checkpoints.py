"""Issue 26 (the bulk path's speed): a bulk batch's commit leaves its WAL frames to a checkpoint on a thread of its
own; inside the batch the connection makes no automatic checkpoint, after it (failed or not) its setting is back,
and the thread copies what the batch wrote into the database file."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.errors import RevisionConflict
from agentkb.models.domain import Chunk, Document
from tests.contract.contract_corpus import CREATED, KB_A, KNOWLEDGE_BASES


def _items(prefix: str, count: int) -> list[tuple[Document, list[Chunk]]]:
    return [(Document(f"{prefix}{n}", KB_A.id, KB_A.workspace_id, f"{prefix}{n}.md", None, f"h{n}", {}, 1, 3, CREATED),
             [Chunk(f"{prefix}{n}:1:0", f"{prefix}{n}", 0, f"granite {n} " * 40, 3, f"c{n}", [0.25] * 384)])
            for n in range(count)]


def _index(tmp_path: Path) -> SqliteIndex:
    db = Database(tmp_path / "bulk.sqlite3")
    for kb in KNOWLEDGE_BASES:
        SqliteCatalog(db).create_knowledge_base(kb)
    return SqliteIndex(db)


def _setting(index: SqliteIndex) -> int:
    return int(index.db.connection().execute("PRAGMA wal_autocheckpoint").fetchone()[0])


def test_the_thread_copies_a_batch_into_the_database_and_the_setting_comes_back(tmp_path: Path) -> None:
    index = _index(tmp_path)
    index.db.connection().execute("PRAGMA wal_autocheckpoint = 100")
    index.write_documents(KB_A, _items("a", 400))  # ~470 pages: past 100, yet no checkpoint in the commit
    assert _setting(index) == 100
    deadline = time.monotonic() + 20
    while (index.checkpoints.done is None or index.checkpoints.done[1] != index.checkpoints.done[2]) \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    busy, frames, copied = index.checkpoints.done or (1, 0, -1)
    assert (busy, frames > 100, copied) == (0, True, frames)  # every frame of the batch, by the thread
    assert index.db.connection().execute("SELECT count(*) FROM chunks").fetchone()[0] == 400


def test_inside_a_batch_no_commit_checkpoints_and_a_failed_batch_restores_the_setting(tmp_path: Path) -> None:
    index = _index(tmp_path)
    before = _setting(index)
    inside: list[int] = []
    real = index.db.transaction

    @contextmanager
    def watched() -> Iterator[object]:
        inside.append(_setting(index))
        with real() as conn:
            yield conn

    index.db.transaction = watched  # type: ignore[method-assign]
    index.write_documents(KB_A, _items("a", 3))
    document, chunks = _items("b", 1)[0]
    with pytest.raises(RevisionConflict):  # a name another document holds: the batch rolls back
        index.write_documents(KB_A, [(replace(document, name="a0.md"), chunks)])
    assert inside == [0, 0]
    assert _setting(index) == before
    assert index.db.connection().execute("SELECT count(*) FROM documents WHERE id LIKE 'b%'").fetchone()[0] == 0


def _copied(index: SqliteIndex) -> tuple[int, int, int]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done = index.checkpoints.done
        if done is not None and done[1] == done[2] and not index.checkpoints._wanted.is_set():
            return done
        time.sleep(0.01)
    raise AssertionError(f"no complete checkpoint: {index.checkpoints.done}")


def test_every_few_batches_the_writer_lets_the_thread_catch_up_so_the_wal_starts_over(tmp_path: Path) -> None:
    index = _index(tmp_path)
    every = index.checkpoints.CATCH_UP_EVERY = 4  # in this test's batches
    index.write_documents(KB_A, _items("a", 200))
    one_batch = _copied(index)[1]
    for n in range(1, every):  # the first catch-up waits after batch `every`
        index.write_documents(KB_A, _items(f"b{n}-", 200))
    assert index.checkpoints._caught_up.is_set()  # it waited for a checkpoint that copied every frame
    index.write_documents(KB_A, _items("c", 200))
    frames = _copied(index)[1]
    assert frames <= 1.5 * one_batch  # the WAL started over: one batch in it, not `every + 1`
    wal = tmp_path / "bulk.sqlite3-wal"
    assert wal.stat().st_size <= (every + 1.5) * one_batch * 4_120  # frames of 4 KiB pages and their headers
