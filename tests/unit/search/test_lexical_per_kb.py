"""Per-KB BM25 indexes (lexical/directory.py): a KB's search reads only its own index, a deleted KB's index goes with
it, a database of the shared-index layout migrates, and a catch-up over many changed documents pages its reads."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.lexical import directory
from agentkb.adapters.embedded.lexical import tantivy as lexical
from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.models.domain import Chunk, Document, IndexQuery, KnowledgeBase
from tests.contract.contract_corpus import CREATED, KB_A, KB_B, KNOWLEDGE_BASES, documents


def _database(tmp_path: Path) -> Database:
    db = Database(tmp_path / "lex.sqlite3")
    for kb in KNOWLEDGE_BASES:
        SqliteCatalog(db).create_knowledge_base(kb)
    return db


def _document(kb: KnowledgeBase, name: str, text: str) -> tuple[Document, list[Chunk]]:
    return (Document(name, kb.id, kb.workspace_id, name, None, f"h-{name}", {}, 1, 3, CREATED),
            [Chunk(f"{name}:1:0", name, 0, text, 3, f"hash-{name}", None)])


def _search(index: SqliteIndex, kb: KnowledgeBase, text: str) -> list[str]:
    return [h.chunk_id for h in index.lexical_search(IndexQuery(kb.workspace_id, (kb.id,), text=text,
                                                                limit_per_kb=100))]


def test_a_kbs_search_never_sees_another_kbs_chunks_and_scores_by_its_own_statistics(tmp_path: Path) -> None:
    # Given the same word in both KBs of a workspace, three times as common in B
    index = SqliteIndex(_database(tmp_path))
    index.write_document(KB_A, *_document(KB_A, "a-1", "basalt quartz"))
    index.write_document(KB_A, *_document(KB_A, "a-2", "pumice only"))
    for n in range(3):
        index.write_document(KB_B, *_document(KB_B, f"b-{n}", "basalt"))
    # When each is searched, Then each finds only its own chunks, from its own directory
    assert _search(index, KB_A, "basalt") == ["a-1:1:0"]
    assert sorted(_search(index, KB_B, "basalt")) == ["b-0:1:0", "b-1:1:0", "b-2:1:0"]
    assert index.lexical.of(KB_A.id).chunks.path == directory.kb_dir(index.lexical.root, KB_A.id) / "chunks"
    assert int(index.lexical.of(KB_A.id).chunks.index.searcher().num_docs) == 2 + 1  # its two chunks, its stamp
    # and the word's rarity is the KB's own: in A (1 of 2 chunks) it weighs more than in B (3 of 3)
    a_score = index.lexical.search_chunks(KB_A.id, "basalt", 5)[0][1]
    b_score = index.lexical.search_chunks(KB_B.id, "basalt", 5)[0][1]
    assert a_score > b_score


def test_deleting_a_kb_deletes_its_index_directory_and_its_log(tmp_path: Path) -> None:
    db = _database(tmp_path)
    index = SqliteIndex(db)
    for kb, document, chunks in documents():
        index.write_document(kb, document, chunks)
    assert _search(index, KB_B, "credentials") == ["doc-b1:1:0"]
    assert _search(index, KB_A, "credentials")
    folder = directory.kb_dir(index.lexical.root, KB_B.id)
    assert folder.is_dir()
    # When the KB is deleted (its chunks deleted: the triggers log them)
    index.delete_knowledge_base(KB_B)
    # Then its directory and log entries are gone, and the other KBs keep theirs
    assert not folder.exists() and directory.kb_dir(index.lexical.root, KB_A.id).is_dir()
    conn = db.connection()
    assert conn.execute("SELECT count(*) FROM lexical_log WHERE knowledge_base_id = 'kb-b'").fetchone()[0] == 0
    assert _search(index, KB_B, "credentials") == []
    assert sorted(_search(index, KB_A, "credentials")) == ["doc-a1:1:0", "doc-a3:1:0"]


def test_a_database_of_the_shared_index_layout_migrates_and_is_rebuilt_from_sqlite(tmp_path: Path) -> None:
    # Given a database as the v3 engine left it: a log without KBs, its triggers, its shared index directory
    db = _database(tmp_path)
    index = SqliteIndex(db)
    for kb, document, chunks in documents():
        index.write_document(kb, document, chunks)
    db.close()
    conn = sqlite3.connect(db.path)
    conn.executescript("""
        DROP TRIGGER chunks_lexical_insert; DROP TRIGGER chunks_lexical_delete; DROP TABLE lexical_log;
        CREATE TABLE lexical_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, document_id TEXT NOT NULL);
        CREATE TRIGGER chunks_lexical_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO lexical_log (document_id) VALUES (new.document_id); END;
        CREATE TRIGGER chunks_lexical_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO lexical_log (document_id) VALUES (old.document_id); END;
        INSERT INTO lexical_log (document_id) SELECT DISTINCT document_id FROM chunks;""")
    conn.close()
    old = tmp_path / "lex.sqlite3.lexical"
    shutil.rmtree(old, ignore_errors=True)
    (old / "v3" / "chunks").mkdir(parents=True)  # the shared index of every KB
    # When a new process opens it
    migrated = SqliteIndex(Database(tmp_path / "lex.sqlite3"))
    conn = migrated.db.connection()
    # Then the log names KBs, the old triggers and entries and the shared directory are gone
    assert "knowledge_base_id" in {r[1] for r in conn.execute("PRAGMA table_info(lexical_log)")}
    assert conn.execute("SELECT count(*) FROM lexical_log").fetchone()[0] == 0
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"chunks_lexical_insert", "chunks_lexical_delete"} <= triggers
    assert not {"chunks_lexical_ai", "chunks_lexical_ad"} & triggers
    # and every KB's index is rebuilt from SQLite at its first search; new writes are logged with their KB
    assert sorted(_search(migrated, KB_A, "credentials")) == ["doc-a1:1:0", "doc-a3:1:0"]
    assert [p.name for p in old.iterdir()] == [directory.FORMAT]
    SqliteIndex(Database(db.path)).write_document(KB_B, *_document(KB_B, "b-new", "obsidian"))  # never searched
    assert [r[0] for r in conn.execute("SELECT DISTINCT knowledge_base_id FROM lexical_log")] == ["kb-b"]
    assert _search(migrated, KB_B, "obsidian") == ["b-new:1:0"]


def test_a_catch_up_over_more_documents_than_a_statement_takes_pages_its_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an index built once, then more changed documents than one page (SQLite's 32,766 variables, scaled down)
    monkeypatch.setattr(lexical, "PAGE", 7)
    db = _database(tmp_path)
    index = SqliteIndex(db)
    index.write_document(KB_A, *_document(KB_A, "first", "granite"))
    assert _search(index, KB_A, "granite") == ["first:1:0"]
    writer = SqliteIndex(Database(db.path))  # another process writes: this one catches up at its next search
    writer.write_documents(KB_A, [_document(KB_A, f"d{n:02d}", f"granite w{n}") for n in range(30)])
    biggest: list[int] = []
    real = sqlite3.Connection.execute

    class Spy(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> Any:  # type: ignore[override]
            biggest.append(sql.count("?"))
            return real(self, sql, *args)

    spied = sqlite3.connect(db.path, isolation_level=None, check_same_thread=False, factory=Spy)
    monkeypatch.setattr(index.db, "connection", lambda: spied)
    # When it searches, Then it finds every document, reading them back at most a page per statement
    assert len(_search(index, KB_A, "granite")) == 31
    assert _search(index, KB_A, "w17") == ["d17:1:0"]
    assert 0 < max(biggest) <= 7 + 1


def test_a_bulk_load_logs_its_documents_with_their_kb_and_a_search_finds_them(tmp_path: Path) -> None:
    db = _database(tmp_path)
    index = SqliteIndex(db)
    index.write_document(KB_A, *_document(KB_A, "old", "feldspar"))
    assert _search(index, KB_A, "feldspar") == ["old:1:0"]  # built before the bulk load
    writer = SqliteIndex(Database(db.path))  # a process that never searched: its log entries wait for a search
    writer.write_documents(KB_A, [_document(KB_A, f"bulk{n}", f"mica schist {n}") for n in range(5)])
    logged = db.connection().execute("SELECT knowledge_base_id, count(*) FROM lexical_log GROUP BY 1").fetchall()
    assert [tuple(r) for r in logged] == [("kb-a", 5)]  # one entry per document, with its KB
    assert len(_search(index, KB_A, "schist")) == 5
    assert _search(index, KB_A, "feldspar") == ["old:1:0"]
    assert _search(index, KB_B, "schist") == []
