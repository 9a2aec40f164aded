"""The embedded lexical index beside SQLite: caught up from SQLite, crash-safe, rebuilt when lost."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.lexical import directory
from agentkb.adapters.embedded.lexical.stamped import StampedIndex
from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.models.domain import IndexQuery
from tests.contract.contract_corpus import KB_A, KNOWLEDGE_BASES, documents

QUERY = IndexQuery("ws1", ("kb-a",), text="database credentials", limit_per_kb=10)


def _database(tmp_path: Path) -> Database:
    db = Database(tmp_path / "lex.sqlite3")
    catalog = SqliteCatalog(db)
    for kb in KNOWLEDGE_BASES:
        catalog.create_knowledge_base(kb)
    return db


def _write_all(index: SqliteIndex) -> None:
    for kb, document, chunks in documents():
        index.write_document(kb, document, chunks)


def _ids(index: SqliteIndex, query: IndexQuery = QUERY) -> list[str]:
    return [h.chunk_id for h in index.lexical_search(query)]


def test_writes_land_in_sqlite_first_and_the_index_catches_up_on_open(tmp_path: Path) -> None:
    # Given documents written by one process that never searched (its index never caught up)
    db = _database(tmp_path)
    _write_all(SqliteIndex(db))
    # When another process opens the database and searches
    fresh = SqliteIndex(Database(db.path))
    # Then it finds them, each once
    assert sorted(_ids(fresh)) == ["doc-a1:1:0", "doc-a3:1:0"]


def test_a_crash_before_the_index_commit_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _database(tmp_path)
    index = SqliteIndex(db)
    _write_all(index)

    # Given the process dies while adding to the index (after SQLite committed, before tantivy did)
    def crash(self: Any, *args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt("process killed")

    monkeypatch.setattr(StampedIndex, "apply", crash)
    with pytest.raises(KeyboardInterrupt):
        index.lexical_search(QUERY)
    monkeypatch.undo()
    # When the next process opens it, Then every document is there exactly once
    assert sorted(_ids(SqliteIndex(Database(db.path)))) == ["doc-a1:1:0", "doc-a3:1:0"]


def test_a_crash_after_the_index_commit_duplicates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _database(tmp_path)
    index = SqliteIndex(db)
    _write_all(index)
    # Given the index committed the changes but the process died before it forgot the log entries
    assert len(_ids(index)) == 2
    db.connection().execute("INSERT INTO lexical_log (document_id, knowledge_base_id)"
                            " SELECT DISTINCT document_id, knowledge_base_id FROM chunks")
    # ... and its stamp is rolled back, as if the commit that recorded it were lost: the whole log replays
    index.lexical.of("kb-a").chunks.apply(0, [], rebuild=False)
    index.lexical.of("kb-a").documents.apply(0, [], rebuild=False)
    fresh = SqliteIndex(Database(db.path))
    # Then replaying it changes nothing: each chunk and document once
    assert sorted(_ids(fresh)) == ["doc-a1:1:0", "doc-a3:1:0"]
    found = fresh.document_search(IndexQuery("ws1", ("kb-a",), text="database credentials"))
    assert sorted(d.document_id for d in found) == ["doc-a1", "doc-a3"]


def test_replaced_and_deleted_documents_leave_the_index(tmp_path: Path) -> None:
    from dataclasses import replace

    db = _database(tmp_path)
    index = SqliteIndex(db)
    _write_all(index)
    assert len(_ids(index)) == 2
    kb, document, chunks = next(d for d in documents() if d[1].id == "doc-a1")
    index.write_document(kb, replace(document, revision=2), [replace(chunks[0], id="doc-a1:2:0", content="Nothing.")])
    index.delete_document(KB_A, "doc-a3")
    assert _ids(index) == []
    assert index.document_search(IndexQuery("ws1", ("kb-a",), text="credentials")) == []
    # the KB's log is forgotten once applied: it does not grow with every write
    kept = db.connection().execute("SELECT COUNT(*) FROM lexical_log WHERE knowledge_base_id = 'kb-a'").fetchone()
    assert kept[0] == 0


def test_a_lost_or_unreadable_index_is_rebuilt_from_sqlite(tmp_path: Path) -> None:
    db = _database(tmp_path)
    index = SqliteIndex(db)
    _write_all(index)
    assert len(_ids(index)) == 2
    root = db.path.parent / f"{db.path.name}.lexical"
    shutil.rmtree(root)
    assert sorted(_ids(SqliteIndex(Database(db.path)))) == ["doc-a1:1:0", "doc-a3:1:0"]
    (root / directory.FORMAT / "kb-a" / "chunks" / "meta.json").write_text("{not json")
    (root / "v0" / "chunks").mkdir(parents=True)  # an index of an older format is dropped
    assert sorted(_ids(SqliteIndex(Database(db.path)))) == ["doc-a1:1:0", "doc-a3:1:0"]
    assert [p.name for p in root.iterdir()] == [directory.FORMAT]


def test_context_is_searchable_but_results_keep_their_content(tmp_path: Path) -> None:
    from dataclasses import replace

    db = _database(tmp_path)
    index = SqliteIndex(db)
    kb, document, chunks = next(d for d in documents() if d[1].id == "doc-a2")
    index.write_document(kb, document, [replace(chunks[0], context="Incident handbook > Pager rotation")])
    (hit,) = index.lexical_search(IndexQuery("ws1", ("kb-a",), text="pager handbook", limit_per_kb=5))
    assert index.hydrate("ws1", [hit.chunk_id])[hit.chunk_id].content == (
        "Vector search uses cosine similarity over embeddings.")
    assert index.document_search(IndexQuery("ws1", ("kb-a",), text="pager"))[0].document_id == "doc-a2"


def test_documents_rank_by_whole_document_bm25(tmp_path: Path) -> None:
    db = _database(tmp_path)
    index = SqliteIndex(db)
    _write_all(index)
    ranked = index.document_search(IndexQuery("ws1", ("kb-a",), text="backups archive credentials"))
    assert ranked[0].document_id == "doc-a1"  # the only document with all three terms, across its two chunks
    assert index.document_search(IndexQuery("ws2", ("kb-a",), text="credentials")) == []  # scoped by workspace


def test_equal_bm25_scores_rank_by_rowid_in_one_kb_and_across_kbs(tmp_path: Path) -> None:
    # Given the same words in chunks of two KBs, written interleaved (so rowid order differs from KB order)
    from agentkb.models.domain import Chunk, Document
    from tests.contract.contract_corpus import CREATED, KB_B

    db = _database(tmp_path)
    index = SqliteIndex(db)
    text = "quartz pumice basalt"
    written: list[str] = []
    for n, kb in enumerate((KB_B, KB_A, KB_B, KB_A)):
        chunk_ids = [f"tie-{n}-{i}" for i in range(2)]
        chunks = [Chunk(c, f"tie-doc-{n}", i, text, 3, f"hash-{c}", None) for i, c in enumerate(chunk_ids)]
        index.write_document(kb, Document(f"tie-doc-{n}", kb.id, kb.workspace_id, f"tie-{n}", None, f"h{n}", {},
                                          2, 6, CREATED), chunks)
        written.extend(chunk_ids)
    # When both KBs are searched for those words, alone and together
    alone = _ids(index, IndexQuery("ws1", ("kb-a",), text=text, limit_per_kb=10))
    together = _ids(index, IndexQuery("ws1", ("kb-b", "kb-a"), text=text, limit_per_kb=10))
    # Then equal scores keep the order the chunks were written in (rowid), within one KB and across KBs
    assert alone == [c for c in written if c.startswith(("tie-1-", "tie-3-"))]
    assert together == written
