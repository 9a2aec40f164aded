"""The revision check of document writes (issue 23), the same on both engines: Index.write_document and
IndexingQueue.enqueue commit only while the name is at the revision they replace, else RevisionConflict with
the current revision and holder, and nothing of the refused write is stored."""

from __future__ import annotations

import dataclasses

import pytest
from port_engines import EnginePorts as Ports
from test_catalog_contract import document, kb

from agentkb.errors import RevisionConflict
from agentkb.models.domain import Chunk, Document, IndexQuery, KnowledgeBase


def revision(base: KnowledgeBase, doc: Document, number: int, text: str) -> tuple[Document, list[Chunk]]:
    chunk = Chunk(f"{doc.id}:{number}:0", doc.id, 0, text, 3, f"hash-{text}", [1.0, 0.0, 0.0, 0.0])
    return dataclasses.replace(doc, revision=number, content_hash=f"hash-{text}", content=text), [chunk]


def served(ports: Ports, base: KnowledgeBase) -> list[str]:
    hits = ports.index.filter_search(IndexQuery(base.workspace_id, (base.id,), limit_per_kb=10))
    return sorted(h.content for h in ports.index.hydrate(base.workspace_id, [h.chunk_id for h in hits]).values())


def refused(ports: Ports, base: KnowledgeBase, doc: Document, chunks: list[Chunk], replaces: int) -> RevisionConflict:
    with pytest.raises(RevisionConflict) as conflict:
        ports.index.write_document(base, doc, chunks, replaces=replaces)
    return conflict.value


def test_a_write_commits_only_over_the_revision_it_replaces(ports: Ports) -> None:
    base = kb("kb-1", "Runbooks")
    ports.catalog.create_knowledge_base(base)
    doc, _ = document(base, "doc-1", "guide.md")
    ports.index.write_document(base, *revision(base, doc, 1, "first text"), replaces=0)
    # a second create of the name (another id) and a stale replace of revision 0 are refused with revision 1
    other, _ = document(base, "doc-2", "guide.md")
    conflict = refused(ports, base, *revision(base, other, 1, "other text"), replaces=0)
    assert (conflict.current_revision, conflict.document_id) == (1, "doc-1")
    ports.index.write_document(base, *revision(base, doc, 2, "second text"), replaces=1)
    conflict = refused(ports, base, *revision(base, doc, 2, "stale text"), replaces=1)
    assert (conflict.current_revision, conflict.document_id) == (2, "doc-1")
    stored = ports.catalog.find_document_by_name("kb-1", "guide.md")
    assert (stored.id, stored.revision, stored.content_hash) == ("doc-1", 2, "hash-second text")  # type: ignore[union-attr]
    assert ports.catalog.document_content("kb-1", "doc-1") == "second text"
    assert served(ports, base) == ["second text"]
    assert ports.catalog.get_document("kb-1", "doc-2") is None
    # a free name is at revision 0
    conflict = refused(ports, base, *revision(base, document(base, "doc-3", "new.md")[0], 2, "x"), replaces=1)
    assert (conflict.current_revision, conflict.document_id) == (0, None)


def test_a_queued_revision_is_indexed_only_while_no_later_write_came(ports: Ports) -> None:
    base = kb("kb-1", "Runbooks")
    ports.catalog.create_knowledge_base(base)
    doc, _ = document(base, "doc-1", "guide.md")
    ports.index.write_document(base, *revision(base, doc, 1, "first text"), replaces=0)
    queued, chunks = revision(base, dataclasses.replace(doc, status="indexing"), 2, "queued text")
    with pytest.raises(RevisionConflict) as conflict:
        ports.indexing_queue.enqueue(queued, replaces=0)  # a stale enqueue stores nothing
    assert conflict.value.current_revision == 1
    assert ports.catalog.document_content("kb-1", "doc-1") == "first text"
    ports.indexing_queue.enqueue(queued, replaces=1)
    assert ports.catalog.get_document("kb-1", "doc-1").status == "indexing"  # type: ignore[union-attr]
    assert served(ports, base) == ["first text"]  # the earlier revision stays searchable meanwhile
    # a later write of the name, before the worker indexes revision 2: revision 2 is then refused
    ports.index.write_document(base, *revision(base, doc, 3, "later text"), replaces=2)
    conflict = refused(ports, base, dataclasses.replace(queued, status="ready"), chunks, replaces=2)
    assert conflict.current_revision == 3
    stored = ports.catalog.get_document("kb-1", "doc-1")
    assert (stored.revision, stored.status) == (3, "ready")  # type: ignore[union-attr]
    assert served(ports, base) == ["later text"]
    ports.indexing_queue.done(queued, "superseded")  # a failure of an old revision never marks the new one
    assert ports.catalog.get_document("kb-1", "doc-1").status == "ready"  # type: ignore[union-attr]
