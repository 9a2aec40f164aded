"""A KB with an approximate index keeps its vectors as float16 and re-scores its best hits from SQLite's float32
(vectors/rescore.py): the hits and scores are those of the exact float32 scan (thresholds lowered so a test KB is
"large")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.vectors import ann_files, changes, nearest, rescore
from agentkb.models.domain import IndexQuery
from tests.unit.search.vector_kb import KB, WIDTH, doc, index_small_tables, large_index, table


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    index_small_tables(monkeypatch)


def _large(tmp_path: Path) -> SqliteIndex:
    return large_index(tmp_path, 17)


def _exact_float32(index: SqliteIndex, q: np.ndarray, k: int) -> list[tuple[str, float]]:
    rows = index.db.connection().execute("SELECT rowid, id, embedding FROM chunks WHERE embedding IS NOT NULL")
    scored = sorted((-float(np.frombuffer(r[2], np.float32) @ q), r[0], r[1]) for r in rows)
    return [(chunk_id, -negated) for negated, _, chunk_id in scored[:k]]


def _queries(n: int) -> np.ndarray:
    q = np.random.default_rng(18).standard_normal((n, WIDTH)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)  # type: ignore[no-any-return]


def test_the_indexed_path_over_float16_answers_exactly_what_float32_answers(tmp_path: Path) -> None:
    index = _large(tmp_path)
    t = table(index)
    assert t.ann is not None and t.vectors.dtype == np.float16  # half the memory of the float32 table
    for q in _queries(15):
        hits = index.vector_search(IndexQuery(KB.workspace_id, (KB.id,), vector=q.tolist(), limit_per_kb=10))
        want = _exact_float32(index, q, 10)
        # the same hits in the same order, with float32's scores (float16's are ~1e-3 off)
        assert [h.chunk_id for h in hits] == [c for c, _ in want]
        assert [h.score for h in hits] == pytest.approx([s for _, s in want], abs=1e-6)


def test_a_float16_table_scanned_exactly_is_re_scored_too(tmp_path: Path) -> None:
    # Given the indexed KB searched through the exact path (a filter leaving at most EXACT_ROWS rows)
    index = _large(tmp_path)
    t = table(index)
    few = np.zeros(len(t.rowids), bool)
    few[:18] = True
    q = _queries(1)[0]
    got, sims = nearest.nearest(t, q, 5, few, rescore.reader(index.db.connection(), WIDTH))
    # Then the order and scores are float32's over exactly those rows
    conn = index.db.connection()
    vectors = rescore.reader(conn, WIDTH)(t.rowids[:18])
    exact = vectors @ q
    order = [int(i) for i in np.lexsort((t.rowids[:18], -exact)) if t.has_vector[i]][:5]
    assert got.tolist() == order
    assert sims.tolist() == pytest.approx(exact[order].tolist(), abs=1e-6)


def test_similarities_of_an_indexed_kb_are_float32(tmp_path: Path) -> None:
    index = _large(tmp_path)
    t = table(index)
    q = _queries(1)[0]
    chunk = t.chunk_ids[0]
    stored = index.db.connection().execute("SELECT embedding FROM chunks WHERE id = ?", (chunk,)).fetchone()[0]
    assert index.similarities([chunk], q.tolist())[chunk] == pytest.approx(
        float(np.frombuffer(stored, np.float32) @ q), abs=1e-7)


def _full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = changes.read_rows

    def spy(conn: Any, kb_id: str, width: int, rowids: Any = None, half_from: Any = None) -> Any:
        if rowids is None:
            calls.append(1)
        return real(conn, kb_id, width, rowids, half_from)

    monkeypatch.setattr(changes, "read_rows", spy)
    return calls


def _table_files(tmp_path: Path, name: str = "v.sqlite3") -> list[Path]:
    return sorted((tmp_path / f"{name}.vectors" / ann_files.FORMAT / KB.id).glob("table-*.bin"))


def _answers(index: SqliteIndex) -> list[list[str]]:
    return [[h.chunk_id for h in index.vector_search(IndexQuery(KB.workspace_id, (KB.id,), vector=q.tolist(),
                                                                limit_per_kb=10))] for q in _queries(5)]


def test_the_next_process_reads_the_saved_table_and_catches_it_up(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    index = _large(tmp_path)
    table(index)
    assert len(_table_files(tmp_path)) == 1  # saved beside the index
    index.delete_document(KB, "d5")  # writes after the save: the file is behind SQLite
    index.write_document(KB, *doc("late", 5, np.random.default_rng(3)))
    want = _answers(index)
    reads = _full_reads(monkeypatch)
    restarted = SqliteIndex(Database(index.db.path))
    t = table(restarted)
    assert reads == [] and t.vectors.dtype == np.float16  # the table came from its file, caught up from the log
    assert "late:1:0" in t.chunk_ids and not any(c.startswith("d5:") for c, live in zip(t.chunk_ids, t.live,
                                                                                          strict=False) if live)
    assert _answers(restarted) == want


@pytest.mark.parametrize("damage", ["torn", "foreign"])
def test_a_torn_or_foreign_table_file_is_ignored_and_sqlite_answers(tmp_path: Path, damage: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    index = _large(tmp_path)
    table(index)
    want = _answers(index)
    (saved,) = _table_files(tmp_path)
    if damage == "torn":  # a crash mid-write would leave a temporary name; a damaged disk, this
        saved.write_bytes(saved.read_bytes()[:-100])
    else:  # another database's table under this KB's name, stamped within this database's log
        other = _large(tmp_path / "other")
        other.delete_document(KB, "d7")
        other.tables.forget(KB.id)
        table(other)
        (foreign,) = _table_files(tmp_path / "other")
        saved.unlink()
        foreign.rename(saved.parent / f"table-{changes.head(index.db.connection())}.bin")
    reads = _full_reads(monkeypatch)
    restarted = SqliteIndex(Database(index.db.path))
    assert table(restarted).vectors.dtype == np.float16
    assert reads == [1]  # read from SQLite
    assert _answers(restarted) == want
