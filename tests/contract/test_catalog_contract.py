"""Catalog port congruence: the embedded engine (SQLite) and the AWS engine (DynamoDB on moto) answer alike.

Every test runs once per engine (the `ports` fixture); documents reach the catalog through the engine's own write
path (Index.write_document commits the document record), as the ingest service writes them.
"""

from __future__ import annotations

import dataclasses

import pytest
from port_engines import EnginePorts as Ports

from agentkb.errors import Conflict
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase
from tests.contract.contract_corpus import CREATED, PROFILE, TAGS


def kb(kb_id: str, name: str, workspace: str = "ws1", **fields: object) -> KnowledgeBase:
    return dataclasses.replace(KnowledgeBase(kb_id, workspace, name, None, PROFILE, TAGS, CREATED), **fields)


def document(base: KnowledgeBase, doc_id: str, name: str, **fields: object) -> tuple[Document, list[Chunk]]:
    chunks = [Chunk(f"{doc_id}:1:0", doc_id, 0, f"text of {name}", 3, f"hash-{doc_id}-0", [1.0, 0.0, 0.0, 0.0])]
    doc = Document(doc_id, base.id, base.workspace_id, name, None, f"hash-{doc_id}", {}, 1, 3, CREATED)
    return dataclasses.replace(doc, **fields), chunks


def test_a_knowledge_base_reads_back_field_for_field(ports: Ports) -> None:
    described = kb("kb-1", "Runbooks", description="On-call runbooks",
                   profile=EmbeddingProfile("amazon.titan-embed-text-v2:0", 256))
    bare = kb("kb-2", "Notes", tag_definitions=())
    for item in (described, bare):
        ports.catalog.create_knowledge_base(item)
        assert ports.catalog.get_knowledge_base("ws1", item.id) == item
        assert ports.catalog.find_knowledge_base_by_name("ws1", item.name) == item


def test_unknown_or_foreign_knowledge_bases_are_none(ports: Ports) -> None:
    ports.catalog.create_knowledge_base(kb("kb-1", "Runbooks"))
    assert ports.catalog.get_knowledge_base("ws1", "kb-404") is None
    assert ports.catalog.get_knowledge_base("ws2", "kb-1") is None  # another workspace never sees it
    assert ports.catalog.find_knowledge_base_by_name("ws2", "Runbooks") is None
    assert ports.catalog.find_knowledge_base_by_name("ws1", "runbooks") is None  # names are case-sensitive


def test_listing_is_per_workspace_ordered_by_name_then_id(ports: Ports) -> None:
    for item in (kb("kb-3", "beta"), kb("kb-1", "alpha"), kb("kb-9", "Alpha"), kb("kb-5", "other", "ws2")):
        ports.catalog.create_knowledge_base(item)
    assert [k.id for k in ports.catalog.list_knowledge_bases("ws1")] == ["kb-9", "kb-1", "kb-3"]
    assert [k.id for k in ports.catalog.list_knowledge_bases("ws2")] == ["kb-5"]
    assert ports.catalog.list_knowledge_bases("ws-empty") == []


def test_a_duplicate_name_in_a_workspace_is_a_conflict_and_keeps_the_first(ports: Ports) -> None:
    first = kb("kb-1", "Runbooks")
    ports.catalog.create_knowledge_base(first)
    with pytest.raises(Conflict):
        ports.catalog.create_knowledge_base(kb("kb-2", "Runbooks", description="second"))
    assert ports.catalog.find_knowledge_base_by_name("ws1", "Runbooks") == first
    assert ports.catalog.get_knowledge_base("ws1", "kb-2") is None  # nothing of the refused write remains
    ports.catalog.create_knowledge_base(kb("kb-3", "Runbooks", "ws2"))  # the same name in another workspace
    assert ports.catalog.find_knowledge_base_by_name("ws2", "Runbooks") is not None


def test_documents_read_back_by_id_and_name_within_their_knowledge_base(ports: Ports) -> None:
    base, other = kb("kb-1", "Runbooks"), kb("kb-2", "Notes")
    for item in (base, other):
        ports.catalog.create_knowledge_base(item)
    doc, chunks = document(base, "doc-1", "guide.md", source_url="https://docs.example/guide",
                           tags={"team": "Platform", "priority": 2.0, "internal": True}, revision=3)
    ports.index.write_document(base, doc, chunks)
    assert ports.catalog.get_document("kb-1", "doc-1") == doc
    assert ports.catalog.find_document_by_name("kb-1", "guide.md") == doc
    assert ports.catalog.get_document("kb-2", "doc-1") is None
    assert ports.catalog.find_document_by_name("kb-2", "guide.md") is None
    assert ports.catalog.get_document("kb-1", "doc-404") is None


def test_a_rewritten_document_replaces_the_record_and_a_delete_removes_it(ports: Ports) -> None:
    base = kb("kb-1", "Runbooks")
    ports.catalog.create_knowledge_base(base)
    first, chunks = document(base, "doc-1", "guide.md")
    ports.index.write_document(base, first, chunks)
    second = dataclasses.replace(first, content_hash="hash-v2", revision=2, tags={"team": "Search"})
    ports.index.write_document(base, second, chunks)
    assert ports.catalog.get_document("kb-1", "doc-1") == second
    ports.index.delete_document(base, "doc-1")
    assert ports.catalog.get_document("kb-1", "doc-1") is None
    assert ports.catalog.find_document_by_name("kb-1", "guide.md") is None


def test_workspace_search_mode_defaults_to_none(ports: Ports) -> None:
    assert ports.catalog.workspace_search_mode("ws-new") is None
    ports.catalog.create_knowledge_base(kb("kb-1", "Runbooks"))
    assert ports.catalog.workspace_search_mode("ws1") is None
    ports.catalog.set_workspace_search_mode("ws1", "vector")
    assert ports.catalog.workspace_search_mode("ws1") == "vector"


# ---- management operations (issue 16): pages, stored text, KB delete ------------------------------------------

def test_document_pages_cover_every_document_once_in_name_order(ports: Ports) -> None:
    base = kb("kb-1", "Runbooks")
    ports.catalog.create_knowledge_base(base)
    names = ["e.md", "a.md", "c.md", "b.md", "d.md"]
    for i, name in enumerate(names):
        ports.index.write_document(base, *document(base, f"doc-{i}", name))
    seen, cursor, pages = [], None, 0
    while True:
        page, cursor = ports.catalog.list_documents("kb-1", 2, cursor)
        seen += [d.name for d in page]
        pages += 1
        assert len(page) <= 2
        if cursor is None:
            break
    assert (seen, pages) == (sorted(names), 3)
    assert ports.catalog.list_documents("kb-404", 2) == ([], None)


def test_a_documents_identity_status_and_text_read_back(ports: Ports) -> None:
    base = kb("kb-1", "Runbooks")
    ports.catalog.create_knowledge_base(base)
    doc, chunks = document(base, "doc-1", "guide.md", source_path="docs/guide.md", content="The full text.")
    ports.index.write_document(base, doc, chunks)
    assert ports.catalog.get_document("kb-1", "doc-1") == dataclasses.replace(doc, content=None)  # reads leave it out
    assert ports.catalog.document_content("kb-1", "doc-1") == "The full text."
    assert ports.catalog.document_content("kb-1", "doc-404") is None


def test_many_documents_texts_and_chunks_read_back_in_one_call_each(ports: Ports) -> None:
    """What export reads a group of documents with (services/portability/export.py): each document's text and
    its chunks by chunk index; a document without text or chunks, another KB's or an unknown id is absent."""
    base, other = kb("kb-1", "Runbooks"), kb("kb-2", "Notes")
    for item in (base, other):
        ports.catalog.create_knowledge_base(item)
    written = {}
    for d in range(3):
        doc, _ = document(base, f"doc-{d}", f"guide-{d}.md", content=f"Text {d}.", chunk_count=3)
        chunks = [Chunk(f"doc-{d}:1:{i}", doc.id, i, f"part {i} of {d}", 3, f"hash-{d}-{i}", [1.0, 0.0, 0.0, float(i)])
                  for i in (2, 0, 1)]  # written out of order: read back by chunk index
        ports.index.write_document(base, doc, chunks)
        written[doc.id] = sorted(chunks, key=lambda c: c.chunk_index)
    untexted, chunks = document(base, "doc-bare", "bare.md")
    ports.index.write_document(base, untexted, chunks)
    foreign, foreign_chunks = document(other, "doc-foreign", "foreign.md", content="Elsewhere.")
    ports.index.write_document(other, foreign, foreign_chunks)
    ids = ["doc-2", "doc-0", "doc-bare", "doc-foreign", "doc-404", "doc-1"]
    assert ports.catalog.document_contents("kb-1", ids) == {"doc-0": "Text 0.", "doc-1": "Text 1.", "doc-2": "Text 2."}
    found = ports.archive.document_chunks(base, ids)
    assert set(found) == {"doc-0", "doc-1", "doc-2", "doc-bare"}
    for doc_id, chunks in written.items():
        assert [(c.id, c.chunk_index, c.content, c.content_hash) for c in found[doc_id]] == \
            [(c.id, c.chunk_index, c.content, c.content_hash) for c in chunks]
        assert [list(c.embedding or []) for c in found[doc_id]] == [list(c.embedding or []) for c in chunks]
    assert ports.archive.document_chunks(base, []) == {} and ports.catalog.document_contents("kb-1", []) == {}


def test_documents_are_found_by_source_path_within_their_knowledge_base(ports: Ports) -> None:
    # Given documents read from files (one path twice, as the old bulk ingest could leave it) in two KBs
    base, other = kb("kb-1", "Runbooks"), kb("kb-2", "Notes")
    for item in (base, other):
        ports.catalog.create_knowledge_base(item)
    written = [document(base, "doc-1", "a/README.md", source_path="/d/a/README.md", created_at="2026-01-01T00:00:00Z"),
               document(base, "doc-2", "README.md", source_path="/d/a/README.md", created_at="2026-01-02T00:00:00Z"),
               document(base, "doc-3", "b.md", source_path="/d/b.md"), document(base, "doc-4", "api.md"),
               document(other, "doc-5", "a/README.md", source_path="/d/a/README.md")]
    for doc, chunks in written:
        ports.index.write_document(base if doc.knowledge_base_id == "kb-1" else other, doc, chunks)
    # When they are looked up by source path; Then each engine answers the same documents, oldest first
    find = ports.catalog.find_documents_by_source_path
    assert [d.id for d in find("kb-1", ["/d/a/README.md", "/d/missing.md"])] == ["doc-1", "doc-2"]
    assert {d.id for d in find("kb-1", {"/d/b.md", "/d/a/README.md"})} == {"doc-1", "doc-2", "doc-3"}
    assert find("kb-1", ["/d/b.md"]) == [dataclasses.replace(written[2][0], content=None)]
    assert [d.id for d in find("kb-2", ["/d/a/README.md"])] == ["doc-5"]
    assert find("kb-1", []) == [] and find("kb-404", ["/d/b.md"]) == []
    many = [f"/d/other-{i}.md" for i in range(150)] + ["/d/b.md"]  # more paths than DynamoDB's IN takes
    assert [d.id for d in find("kb-1", many)] == ["doc-3"]


def test_deleting_a_knowledge_base_removes_it_and_its_documents(ports: Ports) -> None:
    base, kept = kb("kb-1", "Runbooks"), kb("kb-2", "Notes")
    for item in (base, kept):
        ports.catalog.create_knowledge_base(item)
        ports.index.write_document(item, *document(item, f"doc-{item.id}", "guide.md"))
    ports.index.delete_knowledge_base(base)  # as the service does: the index first, then the catalog
    ports.catalog.delete_knowledge_base(base)
    assert ports.catalog.get_knowledge_base("ws1", "kb-1") is None
    assert ports.catalog.find_knowledge_base_by_name("ws1", "Runbooks") is None
    assert ports.catalog.get_document("kb-1", "doc-kb-1") is None
    assert ports.catalog.list_documents("kb-1", 10) == ([], None)
    assert [k.id for k in ports.catalog.list_knowledge_bases("ws1")] == ["kb-2"]
    assert ports.catalog.get_document("kb-2", "doc-kb-2") is not None
    ports.catalog.create_knowledge_base(kb("kb-3", "Runbooks"))  # the name is free again
