"""The Index port's contract: the same cases against every engine (embedded, OpenSearch recorded, live)."""

from __future__ import annotations

import pytest
from contract_engines import Engine

from agentkb.models.domain import CompiledTagFilter, IndexQuery
from tests.contract.contract_corpus import KB_A, chunk_vector, documents


def _ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.chunk_id for h in hits]


def test_lexical_search_returns_matching_chunk_ids_best_first(engine: Engine) -> None:
    # Given the corpus, When a BM25 query runs in one KB
    engine.use_recording("lexical_search")
    query = IndexQuery("ws1", ("kb-a",), text="database credentials", limit_per_kb=10)

    def check() -> None:
        hits = engine.index.lexical_search(query)
        # Then the chunks that mention the terms come back as ids, best first
        assert set(_ids(hits)) == {"doc-a1:1:0", "doc-a3:1:0"}
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert all(h.score > 0 for h in hits)
        first = next(h for h in hits if h.chunk_id == "doc-a1:1:0")
        assert (first.knowledge_base_id, first.document_id) == ("kb-a", "doc-a1")

    engine.eventually(check)


def test_hydrate_returns_the_fields_of_the_chunks_a_search_returns(engine: Engine) -> None:
    engine.use_recording("hydrate")

    def check() -> None:
        found = engine.index.hydrate("ws1", ["doc-a1:1:0", "doc-a2:1:0", "missing:1:0"])
        # Then each known chunk comes with its content, document fields and tags; unknown ids are left out
        assert sorted(found) == ["doc-a1:1:0", "doc-a2:1:0"]
        first = found["doc-a1:1:0"]
        assert (first.knowledge_base_id, first.document_id, first.document_name, first.source_url,
                first.chunk_index) == ("kb-a", "doc-a1", "alpha-guide", "https://docs.example/alpha", 0)
        assert first.content == "Rotate the database credentials every ninety days."
        assert first.metadata == {"team": "Platform", "priority": 1, "published": "2024-01-10", "internal": True}
        # the context was indexed with the chunk, but the content is the document's own text
        assert found["doc-a2:1:0"].content == "Vector search uses cosine similarity over embeddings."
        assert engine.index.hydrate("ws2", ["doc-a1:1:0"]) == {}  # another workspace's chunk is not there

    engine.eventually(check)


def test_lexical_search_finds_chunks_by_their_title_and_headings(engine: Engine) -> None:
    engine.use_recording("lexical_context")
    query = IndexQuery("ws1", ("kb-a",), text="relevance handbook", limit_per_kb=10)
    engine.eventually(lambda: _assert_ids(engine.index.lexical_search(query), ["doc-a2:1:0"]))


def test_document_search_ranks_whole_documents(engine: Engine) -> None:
    # doc-a1 holds both terms, across its two chunks: no single chunk of it matches both
    engine.use_recording("document_search")
    query = IndexQuery("ws1", ("kb-a",), text="credentials archive", limit_per_kb=10)

    def check() -> None:
        found = engine.index.document_search(query)
        assert [d.document_id for d in found][:1] == ["doc-a1"]
        assert {d.document_id for d in found} == {"doc-a1", "doc-a3"}
        assert all(d.knowledge_base_id == "kb-a" and d.score > 0 for d in found)
        filtered = IndexQuery("ws1", ("kb-a",), (CompiledTagFilter("text1", "text", "eq", "Platform"),),
                              text="credentials", limit_per_kb=10)
        assert [d.document_id for d in engine.index.document_search(filtered)] == ["doc-a1"]
        assert engine.index.document_search(IndexQuery("ws1", ("kb-c",), text="credentials")) == []

    engine.eventually(check)


def test_vector_search_scores_are_cosine_similarities(engine: Engine) -> None:
    engine.use_recording("vector_search")
    query = IndexQuery("ws1", ("kb-a",), vector=chunk_vector("doc-a1:1:0"), limit_per_kb=2)

    def check() -> None:
        hits = engine.index.vector_search(query)
        assert _ids(hits) == ["doc-a1:1:0", "doc-a3:1:0"]
        assert [round(h.score, 4) for h in hits] == [1.0, 0.6]  # the score is the cosine similarity

    engine.eventually(check)


def test_vector_search_applies_tag_filters_before_ranking(engine: Engine) -> None:
    engine.use_recording("vector_search_filtered")
    query = IndexQuery("ws1", ("kb-a",), (CompiledTagFilter("text1", "text", "eq", "Search"),),
                       vector=chunk_vector("doc-a1:1:0"), limit_per_kb=2)

    def check() -> None:
        hits = engine.index.vector_search(query)
        assert _ids(hits) == ["doc-a2:1:0"]
        assert round(hits[0].score, 4) == 0.0

    engine.eventually(check)


def test_filter_search_orders_by_document_name_then_chunk_index(engine: Engine) -> None:
    engine.use_recording("filter_search")
    query = IndexQuery("ws1", ("kb-a",), (CompiledTagFilter("number1", "number", "gte", 1.0),), limit_per_kb=10)

    def check() -> None:
        hits = engine.index.filter_search(query)
        assert _ids(hits) == ["doc-a1:1:0", "doc-a1:1:1", "doc-a2:1:0"]
        assert engine.index.hydrate("ws1", [hits[2].chunk_id])[hits[2].chunk_id].metadata["team"] == "Search"

    engine.eventually(check)


TAG_CASES = [
    ("contains", CompiledTagFilter("text1", "text", "contains", "plat"), ["doc-a1:1:0", "doc-a1:1:1"]),
    ("starts_with", CompiledTagFilter("text1", "text", "starts_with", "sea"), ["doc-a2:1:0"]),
    ("ends_with", CompiledTagFilter("text1", "text", "ends_with", "FORM"), ["doc-a1:1:0", "doc-a1:1:1"]),
    ("not_contains", CompiledTagFilter("text1", "text", "not_contains", "plat"), ["doc-a2:1:0"]),
    ("neq", CompiledTagFilter("text1", "text", "neq", "Platform"), ["doc-a2:1:0"]),
    ("eq_case_sensitive", CompiledTagFilter("text1", "text", "eq", "platform"), []),
    ("lt", CompiledTagFilter("number1", "number", "lt", 2.0), ["doc-a1:1:0", "doc-a1:1:1"]),
    ("between_dates", CompiledTagFilter("date1", "date", "between", "2024-05-01", "2024-12-31"), ["doc-a2:1:0"]),
    ("boolean_false", CompiledTagFilter("boolean1", "boolean", "eq", False), ["doc-a2:1:0"]),
]


@pytest.mark.parametrize(("case", "tag_filter", "expected"), TAG_CASES, ids=[c[0] for c in TAG_CASES])
def test_tag_filter_semantics(engine: Engine, case: str, tag_filter: CompiledTagFilter, expected: list[str]) -> None:
    # neq / not_contains never match an untagged document (SQL NULL semantics); text matching ignores case
    # except for eq; dates compare as dates.
    engine.use_recording(f"tag_{case}")
    query = IndexQuery("ws1", ("kb-a",), (tag_filter,), limit_per_kb=10)
    engine.eventually(lambda: _assert_ids(engine.index.filter_search(query), expected))


def _assert_ids(hits: list, expected: list[str]) -> None:  # type: ignore[type-arg]
    assert _ids(hits) == expected


def test_delete_removes_the_document_and_its_chunks(engine: Engine) -> None:
    engine.use_recording("delete_document")
    query = IndexQuery("ws1", ("kb-a",), (CompiledTagFilter("number1", "number", "gte", 1.0),), limit_per_kb=10)
    engine.index.delete_document(KB_A, "doc-a2")
    assert not engine.has_document("kb-a", "doc-a2")
    engine.eventually(lambda: _assert_ids(engine.index.filter_search(query), ["doc-a1:1:0", "doc-a1:1:1"]))
    if engine.name == "opensearch-live":  # the live index is shared by the session: put it back
        kb, document, chunks = next(d for d in documents() if d[1].id == "doc-a2")
        engine.index.write_document(kb, document, chunks)


def test_multi_kb_search_caps_each_knowledge_base(engine: Engine) -> None:
    engine.use_recording("multi_kb_caps")
    query = IndexQuery("ws1", ("kb-a", "kb-b"), text="credentials database", limit_per_kb=1)

    def check() -> None:
        hits = engine.index.lexical_search(query)
        assert sorted(h.knowledge_base_id for h in hits) == ["kb-a", "kb-b"]
        assert {h.chunk_id for h in hits} <= {"doc-a1:1:0", "doc-a3:1:0", "doc-b1:1:0"}

    engine.eventually(check)


def test_workspace_isolation(engine: Engine) -> None:
    # A KB of another workspace yields nothing, whichever leg asks; its own workspace sees it.
    engine.use_recording("workspace_isolation")
    vector = chunk_vector("doc-a1:1:0")
    assert engine.index.lexical_search(IndexQuery("ws1", ("kb-c",), text="database credentials")) == []
    assert engine.index.vector_search(IndexQuery("ws1", ("kb-c",), vector=vector)) == []
    engine.eventually(lambda: _assert_ids(
        engine.index.vector_search(IndexQuery("ws2", ("kb-c",), vector=vector, limit_per_kb=5)), ["doc-c1:1:0"]))


def test_similarities_are_cosine_of_stored_vectors(engine: Engine) -> None:
    engine.use_recording("similarities")
    vector = chunk_vector("doc-a1:1:0")

    def check() -> None:
        sims = engine.index.similarities(["doc-a1:1:0", "doc-a3:1:0", "doc-a2:1:0"], vector)
        assert {k: round(v, 4) for k, v in sims.items()} == {"doc-a1:1:0": 1.0, "doc-a3:1:0": 0.6,
                                                              "doc-a2:1:0": 0.0}

    engine.eventually(check)


def test_rewriting_a_document_replaces_its_chunks(engine: Engine) -> None:
    engine.use_recording("rewrite_document")
    kb, document, chunks = next(d for d in documents() if d[1].id == "doc-b2")
    from dataclasses import replace

    new_chunk = replace(chunks[0], id="doc-b2:2:0", content="Dot products compare embedding directions.")
    engine.index.write_document(kb, replace(document, revision=2), [new_chunk])
    query = IndexQuery("ws1", ("kb-b",), text="embedding directions", limit_per_kb=10)
    engine.eventually(lambda: _assert_ids(engine.index.lexical_search(query), ["doc-b2:2:0"]))
    if engine.name == "opensearch-live":
        engine.index.write_document(kb, document, chunks)
