"""The approximate index of a large KB (thresholds lowered so a test KB is "large"): it answers what the exact scan
answers, filtered searches return k eligible hits, every write updates it, and it is persisted and caught up from the
change log by the next process (a crash between SQLite and the file loses and duplicates nothing)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.vectors import ann, ann_files, chunk_table, nearest
from agentkb.models.domain import IndexQuery
from tests.unit.search.vector_kb import KB, doc, index_small_tables, large_index, table

DOCS, CHUNKS = 120, 5  # 600 chunks, 480 with a vector (doc() leaves chunk 1 of each without one)


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    index_small_tables(monkeypatch)


def large(tmp_path: Path) -> SqliteIndex:
    return large_index(tmp_path, 7, DOCS, CHUNKS)


def exact(t: chunk_table.ChunkTable, q: np.ndarray, k: int, allowed: Any = None) -> list[int]:
    return nearest.nearest(dataclasses.replace(t, ann=None), q, k, allowed)[0].tolist()  # type: ignore[no-any-return]


def queries(n: int = 15) -> np.ndarray:
    q = np.random.default_rng(8).standard_normal((n, 8)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)  # type: ignore[no-any-return]


def test_a_large_kb_is_searched_through_the_index_and_answers_like_the_exact_scan(tmp_path: Path) -> None:
    t = table(large(tmp_path))
    assert t.ann is not None and len(t.ann) == int(t.has_vector.sum()) == 480
    for q in queries():
        assert nearest.nearest(t, q, 10)[0].tolist() == exact(t, q, 10)


def test_a_filter_gets_k_eligible_hits_over_fetching_lists_as_needed(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nearest, "NPROBE", 1)  # one list first: a filter leaves fewer than k there
    t = table(large(tmp_path))
    allowed = np.zeros(len(t.rowids), bool)
    allowed[::7] = True  # 86 rows (69 with a vector): over EXACT_ROWS, so the index answers
    eligible = set(np.flatnonzero(allowed & t.has_vector).tolist())
    for q in queries():
        got, sims = nearest.nearest(t, q, 10, allowed)
        assert len(got) == 10 and set(got.tolist()) <= eligible
        assert list(sims) == sorted(sims, reverse=True)
    few = np.zeros(len(t.rowids), bool)
    few[:12] = True  # at most EXACT_ROWS rows: exact over exactly those
    for q in queries():
        assert nearest.nearest(t, q, 5, few)[0].tolist() == exact(t, q, 5, few)


def test_every_write_updates_the_index(tmp_path: Path) -> None:
    index = large(tmp_path)
    rng = np.random.default_rng(9)
    gone = {f"d{i}:1:{j}" for i in range(10) for j in range(CHUNKS)}
    for i in range(10):
        index.delete_document(KB, f"d{i}")
    index.write_document(KB, *doc("d50", CHUNKS, rng, revision=2))
    index.write_document(KB, *doc("fresh", CHUNKS, rng))
    t = table(index)
    assert t.ann is not None and len(t.ann) == int(t.has_vector.sum())
    hits = index.vector_search(IndexQuery(KB.workspace_id, (KB.id,), vector=queries(1)[0].tolist(),
                                          limit_per_kb=480))
    ids = {h.chunk_id for h in hits}
    assert not ids & gone and not {i for i in ids if i.startswith("d50:1:")}
    assert {f"fresh:1:{j}" for j in (0, 2, 3, 4)} <= ids


def test_the_next_process_loads_the_saved_index_and_catches_it_up(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    index = large(tmp_path)
    table(index)  # built and saved
    folder = tmp_path / "v.sqlite3.vectors" / ann_files.FORMAT / KB.id
    assert len(list(folder.glob("ivf-*.faiss"))) == 1
    # Writes after the save: the file is behind SQLite (as after a crash before the next save)
    rng = np.random.default_rng(10)
    index.delete_document(KB, "d3")
    index.write_document(KB, *doc("late", CHUNKS, rng))

    def no_rebuild(*args: Any) -> Any:
        raise AssertionError("rebuilt instead of loaded")

    monkeypatch.setattr(ann.Ann, "build", no_rebuild)
    restarted = SqliteIndex(Database(index.db.path))
    t = table(restarted)
    assert t.ann is not None and len(t.ann) == int(t.has_vector.sum()) == 480
    for q in queries():
        assert nearest.nearest(t, q, 10)[0].tolist() == exact(t, q, 10)
    names = {t.chunk_ids[i] for i in nearest.nearest(t, queries(1)[0], 480)[0].tolist()}
    assert "late:1:0" in names and not any(n.startswith("d3:") for n in names)


def test_a_file_from_another_database_is_rebuilt(tmp_path: Path) -> None:
    index = large(tmp_path)
    table(index)
    folder = tmp_path / "v.sqlite3.vectors" / ann_files.FORMAT / KB.id
    saved = next(folder.glob("ivf-*.faiss"))
    saved.rename(folder / "ivf-99999999-480.faiss")  # a stamp past this database's log
    restarted = SqliteIndex(Database(index.db.path))
    t = table(restarted)
    assert t.ann is not None and len(t.ann) == 480
    assert [p.name.split("-")[1] for p in folder.glob("ivf-*.faiss")] != ["99999999"]


def test_a_kb_that_shrinks_goes_back_to_the_exact_scan(tmp_path: Path) -> None:
    index = large(tmp_path)
    assert table(index).ann is not None
    for i in range(90):
        index.delete_document(KB, f"d{i}")
    t = table(index)
    assert t.ann is None
    assert not list((tmp_path / "v.sqlite3.vectors" / ann_files.FORMAT).glob(f"{KB.id}/*.faiss"))
