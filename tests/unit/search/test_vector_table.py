"""The embedded vector table: a write changes only its own rows in memory, and the result always equals a fresh load
from SQLite (appends, replaces that reuse rowids, deletes, compaction, bulk writes)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.lexical.tantivy import LexicalIndexes
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.vectors import changes, store
from agentkb.adapters.embedded.vectors.chunk_table import ChunkTables
from agentkb.models.domain import IndexQuery
from tests.unit.search.vector_kb import KB, doc, make_index, table, unit


def assert_same_as_fresh(index: SqliteIndex) -> None:
    """The cached table, live rows only, equals a table a new process reads whole from SQLite."""
    mine = table(index)
    fresh = ChunkTables().get(index.db.connection(), KB.id)
    live = np.flatnonzero(mine.live)
    assert mine.rowids[live].tolist() == fresh.rowids.tolist()
    assert [mine.chunk_ids[i] for i in live] == fresh.chunk_ids[:len(fresh.rowids)]
    assert [mine.document_ids[i] for i in live] == fresh.document_ids[:len(fresh.rowids)]
    assert mine.has_vector[live].tolist() == fresh.has_vector.tolist()
    assert np.array_equal(mine.vectors[live], fresh.vectors)
    assert mine.version == fresh.version


def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    calls: list[Any] = []
    real = changes.read_rows

    def spy(conn: Any, kb_id: str, width: int, rowids: Any = None, half_from: Any = None) -> Any:
        calls.append(None if rowids is None else len(rowids))
        return real(conn, kb_id, width, rowids, half_from)

    monkeypatch.setattr(changes, "read_rows", spy)
    return calls


def test_a_write_reads_back_only_its_own_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a KB of 20 documents whose table this process has loaded
    rng = np.random.default_rng(1)
    index = make_index(tmp_path)
    index.write_documents(KB, [doc(f"d{i}", 3, rng) for i in range(20)])
    assert len(table(index).rowids) == 60
    reads = full_reads(monkeypatch)
    # When one one-chunk document is written
    index.write_document(KB, *doc("new", 1, rng))
    # Then the next search reads that one row back, nothing else, and the table equals a fresh load
    assert len(table(index).rowids) == 61
    assert reads == [1]
    assert_same_as_fresh(index)


def test_replacing_the_last_document_reuses_its_rowids_in_place(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    index = make_index(tmp_path)
    index.write_documents(KB, [doc("a", 3, rng), doc("b", 3, rng)])
    before = table(index).rowids.tolist()
    # SQLite hands the replacement the rowids of the rows it just deleted (they were the highest)
    index.write_document(KB, *doc("b", 3, rng, revision=2))
    after = table(index)
    assert after.rowids.tolist() == before
    assert [after.chunk_ids[i] for i in range(3, 6)] == ["b:2:0", "b:2:1", "b:2:2"]
    assert_same_as_fresh(index)


def test_deleted_rows_are_no_longer_found_and_compaction_keeps_the_rest(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "COMPACT_MIN", 4)
    rng = np.random.default_rng(3)
    index = make_index(tmp_path)
    index.write_documents(KB, [doc(f"d{i}", 2, rng) for i in range(10)])
    gone = table(index).rowids[:2].tolist()
    index.delete_document(KB, "d0")
    _, found = table(index).positions(gone)
    assert not found.any()
    for i in range(1, 6):  # enough dead rows to compact
        index.delete_document(KB, f"d{i}")
    assert len(table(index).rowids) == 8  # compacted: dead entries are gone
    assert_same_as_fresh(index)


def test_any_sequence_of_writes_leaves_the_table_equal_to_sqlite(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "COMPACT_MIN", 8)
    rng, pick = np.random.default_rng(4), random.Random(4)
    index = make_index(tmp_path)
    other = make_index_in(index.db)  # another process writing the same database
    revisions: dict[str, int] = {}
    for step in range(120):
        name = f"d{pick.randrange(15)}"
        writer = index if step % 3 else other
        if name in revisions and pick.random() < 0.3:
            writer.delete_document(KB, name)
            del revisions[name]
        else:
            revisions[name] = revisions.get(name, 0) + 1
            writer.write_document(KB, *doc(name, pick.randrange(1, 5), rng, revisions[name]))
        if step % 4 == 0:
            assert_same_as_fresh(index)
    assert_same_as_fresh(index)


def make_index_in(db: Database) -> SqliteIndex:
    return SqliteIndex(Database(db.path))


def test_a_pruned_log_makes_a_lagging_table_reload_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(changes, "KEEP_LOG", 2)
    rng = np.random.default_rng(5)
    index = make_index(tmp_path)
    index.write_document(KB, *doc("a", 2, rng))
    lagging = make_index_in(index.db)
    table(lagging)
    for i in range(6):  # another process writes and prunes the log past what `lagging` applied
        index.write_document(KB, *doc(f"b{i}", 2, rng))
        table(index)
    assert not changes.complete_since(index.db.connection(), lagging.tables._kbs[KB.id].seq)
    reads = full_reads(monkeypatch)
    assert len(table(lagging).rowids) == 14
    assert reads == [None]
    assert_same_as_fresh(lagging)


def test_a_bulk_write_of_many_documents_lands_in_one_catch_up(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    index = make_index(tmp_path)
    index.write_document(KB, *doc("first", 2, rng))
    version = table(index).version
    index.write_documents(KB, [doc(f"bulk{i}", 4, rng) for i in range(300)])
    assert table(index).version == version + 1
    assert len(table(index).rowids) == 1202
    assert_same_as_fresh(index)


def test_a_process_that_searches_catches_up_in_the_writer_so_the_next_search_has_nothing_to_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a process that has searched the KB
    rng = np.random.default_rng(7)
    index = make_index(tmp_path)
    index.write_document(KB, *doc("a", 2, rng))
    query = IndexQuery(KB.workspace_id, (KB.id,), text="text", vector=unit(rng), limit_per_kb=10)
    assert index.vector_search(query) and index.lexical_search(query)
    # When it writes a document
    index.write_document(KB, *doc("b", 2, rng))
    reads = full_reads(monkeypatch)

    def no_catch_up(*args: Any) -> None:
        raise AssertionError("the search paid for the write")

    monkeypatch.setattr(LexicalIndexes, "_catch_up", no_catch_up)
    monkeypatch.setattr(ChunkTables, "_refresh", no_catch_up)
    # Then the next search reads nothing back and finds the new document in both legs
    assert {h.document_id for h in index.vector_search(query)} == {"a", "b"}
    assert {h.document_id for h in index.lexical_search(query)} == {"a", "b"}
    assert reads == []


def test_a_process_that_never_searched_leaves_the_catch_up_to_the_first_search(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    index = make_index(tmp_path)  # e.g. `agentkb ingest` of a folder: no tantivy commit per file
    index.write_document(KB, *doc("a", 2, rng))
    assert index.lexical.of(KB.id).applied is None and not index.tables.cached(KB.id)
