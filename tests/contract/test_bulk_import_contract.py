"""Issue 26: `agentkb import` writes documents through the bulk path (`Index.write_documents`), on both engines
(embedded SQLite; AWS on moto + the in-memory OpenSearch). A crash inside a batch leaves every document whole or
absent, a re-run completes it with each chunk stored once, and importing again changes nothing."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import tests.contract.test_portability_engines as engines
from agentkb.composition import Ports
from agentkb.errors import Conflict, RevisionConflict
from agentkb.models.domain import IndexQuery
from agentkb.services.portability import sinks
from agentkb.services.portability.archive_file import ArchiveReader, ArchiveWriter
from agentkb.services.portability.importer import import_archive
from agentkb.services.portability.records import chunk_from, document_from, kb_from, pack_vector
from testkit.bedrock import hashed_embedding

WS, KB, DOCUMENTS, CHUNKS = "ws-bulk", "kb-bulk", 12, 3
BATCH = 3 * CHUNKS  # sinks.BULK_CHUNKS in these tests: four batches of three documents


class Crash(BaseException):
    """What a kill -9 leaves behind, in process: the write stops where it is (no except clause catches it)."""


def write_archive(path: Path) -> None:
    profile = {"model": engines.SameModel.model_id, "dimension": engines.SameModel.dimension}
    with path.open("w", encoding="utf-8") as out:
        writer = ArchiveWriter(out, {"engine": "embedded", "knowledge_bases": [], "workspace": WS,
                                     "embedder": profile})
        writer.write("knowledge_bases", {"id": KB, "name": "bulk", "description": None, "profile": profile,
                                         "tag_definitions": [], "created_at": "2026-01-01T00:00:00Z",
                                         "secret_policy": "flag"})
        for d in range(DOCUMENTS):
            texts = [f"topic {d} part {i}: replication of shard {d * CHUNKS + i}" for i in range(CHUNKS)]
            content = "\n\n".join(texts)
            writer.write("documents", {
                "id": f"doc-{d:02d}", "knowledge_base_id": KB, "name": f"doc-{d:02d}.md", "source_url": None,
                "source_path": None, "content": content, "content_hash": _sha(content), "tags": {},
                "chunk_count": CHUNKS, "token_count": 9 * CHUNKS, "created_at": "2026-01-01T00:00:00Z",
                "revision": 1, "status": "ready", "error": None, "secret_chunks": []})
            for i, text in enumerate(texts):
                writer.write("chunks", {
                    "id": f"doc-{d:02d}:1:{i}", "document_id": f"doc-{d:02d}", "chunk_index": i, "content": text,
                    "context": "", "token_count": 9, "content_hash": _sha(text), "pages": [], "secret": False,
                    "embedding": pack_vector(hashed_embedding(text, engines.SameModel.dimension))})
        writer.finish()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def stored_chunk_ids(ports: Ports) -> list[str]:
    """Every chunk the index answers for the KB (duplicates included), by document name and chunk index."""
    hits = ports.index.filter_search(IndexQuery(WS, (KB,), limit_per_kb=10 * DOCUMENTS * CHUNKS))
    return [h.chunk_id for h in hits]


def crash_in_second_batch(ports: Ports, engine: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """Make the import's second bulk write die part way; the number of documents a re-run finds committed."""
    if engine == "embedded":  # inside the batch's transaction, after its rows, logs and triggers went in
        from agentkb.adapters.embedded.sqlite import bulk_load

        real_load, calls = bulk_load.load_new, []

        def load_then_crash(*args: Any) -> None:
            real_load(*args)
            calls.append(1)
            if len(calls) == 2:
                raise Crash
        monkeypatch.setattr(bulk_load, "load_new", load_then_crash)
        return BATCH // CHUNKS  # the first batch
    # AWS: the second batch's chunks and document records are indexed, its first record committed, then the crash
    registry = ports.index.registry  # type: ignore[attr-defined]
    real_put, puts = registry.put_document, []

    def put_then_crash(document: Any) -> bool:
        if len(puts) == BATCH // CHUNKS + 1:
            raise Crash
        puts.append(document.id)
        return bool(real_put(document))
    monkeypatch.setattr(registry, "put_document", put_then_crash)
    return BATCH // CHUNKS + 1


@pytest.mark.parametrize("engine", ["embedded", "aws"])
def test_a_bulk_import_that_died_inside_a_batch_completes_once(engine: str, aws_backend: Any, data_dir: Path,
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given an archive of twelve documents, imported three documents a bulk write
    archive = tmp_path / "bulk.jsonl"
    write_archive(archive)
    monkeypatch.setattr(sinks, "BULK_CHUNKS", BATCH)
    ports = engines.use_engine(monkeypatch, engine, tmp_path / "target")
    with monkeypatch.context() as crashing:
        committed = crash_in_second_batch(ports, engine, crashing)
        # When the second write dies part way
        with pytest.raises(Crash):
            import_archive(ports, archive)
    ports = engines.use_engine(monkeypatch, engine, tmp_path / "target")
    # Then a re-run writes the rest: what was committed is present, the rest written, all verified
    report = import_archive(ports, archive).as_dict()
    documents = report["sections"]["documents"]
    assert (documents["present"], documents["written"]) == (committed, DOCUMENTS - committed), report
    assert all(s["verified"] for name, s in report["sections"].items() if name != "keys"), report
    # and every chunk is stored once, searchable by its vector
    expected = [f"doc-{d:02d}:1:{i}" for d in range(DOCUMENTS) for i in range(CHUNKS)]
    assert stored_chunk_ids(ports) == expected
    text = "topic 7 part 1: replication of shard 22"
    hits = ports.index.vector_search(IndexQuery(WS, (KB,), vector=engines.SameModel().embed_query(text),
                                                limit_per_kb=3))
    assert hits[0].chunk_id == "doc-07:1:1"
    # and importing again changes nothing and says so
    again = import_archive(ports, archive).as_dict()
    assert not again["changed"] and again["sections"]["chunks"]["present"] == DOCUMENTS * CHUNKS, again
    assert stored_chunk_ids(ports) == expected


def two_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Ports, Any, Any, Any, list[Any]]:
    """An embedded target holding the archive's KB (no document yet), its first two documents and the first's
    chunks, for the bulk writes below."""
    archive = tmp_path / "bulk.jsonl"
    write_archive(archive)
    ports = engines.use_engine(monkeypatch, "embedded", tmp_path / "target")
    records = list(ArchiveReader(archive).records())
    kb = kb_from(records[0][1], WS)
    ports.catalog.create_knowledge_base(kb)
    first, second = document_from(records[1][1], WS), document_from(records[1 + 1 + CHUNKS][1], WS)
    return ports, kb, first, second, [chunk_from(r) for _, r in records[2:2 + CHUNKS]]


def test_a_bulk_write_refuses_a_name_another_document_holds_and_keeps_nothing_of_the_batch(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ports, kb, first, second, chunks = two_documents(tmp_path, monkeypatch)
    ports.index.write_documents(kb, [(first, chunks)])
    # Given doc-00.md held by doc-00, When a batch brings another document under that name
    clash = replace(second, name=first.name)
    with pytest.raises(RevisionConflict):
        ports.index.write_documents(kb, [(replace(second, id="doc-new", name="fresh.md"), []), (clash, [])])
    # Then nothing of the batch is stored: not even its other, free name
    assert ports.catalog.get_document(kb.id, "doc-new") is None
    assert stored_chunk_ids(ports) == [c.id for c in chunks]


def test_a_bulk_write_with_an_id_held_already_is_a_conflict_that_keeps_nothing(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ports, kb, first, second, chunks = two_documents(tmp_path, monkeypatch)
    # When two documents of one batch bring the same chunk ids (a crafted archive)
    with pytest.raises(Conflict):
        ports.index.write_documents(kb, [(first, chunks), (second, chunks)])
    # Then neither is stored, and the change-log triggers the batch dropped are back
    assert ports.catalog.get_document(kb.id, first.id) is None and stored_chunk_ids(ports) == []
    conn = sqlite3.connect(tmp_path / "target" / "agentkb.sqlite3")
    triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    conn.close()
    assert {"chunks_vector_ai", "chunks_lexical_insert", "chunks_lexical_delete"} <= triggers


def test_a_bulk_write_replaces_a_lower_revision_it_holds_beside_new_documents(
        data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ports, kb, first, second, chunks = two_documents(tmp_path, monkeypatch)
    ports.index.write_documents(kb, [(first, chunks)])
    # When one batch brings revision 2 of the stored document (one chunk now) and a new document
    newer = replace(first, revision=2, chunk_count=1)
    kept = replace(chunks[0], id=f"{first.id}:2:0", content="revision two replaces the shard text")
    fresh = replace(chunks[1], id="s:1:0", document_id=second.id)
    ports.index.write_documents(kb, [(newer, [kept]), (second, [fresh])])
    # Then the stored document is at revision 2 with only its new chunk, the new one is there, both searchable
    stored = ports.catalog.get_document(kb.id, first.id)
    assert stored is not None and stored.revision == 2
    assert sorted(stored_chunk_ids(ports)) == sorted([kept.id, "s:1:0"])
    hits = ports.index.lexical_search(IndexQuery(WS, (KB,), text="revision two replaces", limit_per_kb=3))
    assert [h.chunk_id for h in hits][:1] == [kept.id]
