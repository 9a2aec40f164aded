"""Export and the import's read-back read documents in groups (services/portability/export.py): bounded by the
documents' chunk counts, each group's chunks in one embedded query that seeks by document, never scans a KB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkb.adapters.embedded.sqlite.archive import CHUNKS_OF_DOCUMENTS
from agentkb.adapters.embedded.sqlite.catalog import CONTENTS_OF_DOCUMENTS
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.models.domain import Document
from agentkb.services.portability.export import CHUNKS_PER_READ, _by_chunks


def _document(doc_id: str, chunks: int) -> Document:
    return Document(doc_id, "kb", "ws", f"{doc_id}.md", None, "h", {}, chunks, chunks, "2026-01-01T00:00:00Z")


def test_groups_hold_at_most_the_read_bound_or_one_bigger_document_and_keep_the_order() -> None:
    counts = [CHUNKS_PER_READ // 2, CHUNKS_PER_READ // 2, 1, 3 * CHUNKS_PER_READ, 0, 5, CHUNKS_PER_READ]
    page = [_document(f"d{i}", n) for i, n in enumerate(counts)]
    groups = [[d.id for d in group] for group in _by_chunks(page)]
    assert groups == [["d0", "d1"], ["d2"], ["d3"], ["d4", "d5"], ["d6"]]
    assert [d.id for group in _by_chunks(page) for d in group] == [d.id for d in page]
    assert list(_by_chunks([])) == []


@pytest.mark.parametrize(("sql", "index"), [(CHUNKS_OF_DOCUMENTS, "chunks_document"),
                                            (CONTENTS_OF_DOCUMENTS, "sqlite_autoindex_documents_1")])
def test_a_groups_texts_and_chunks_are_found_by_document_id_not_by_knowledge_base(
        tmp_path: Path, sql: str, index: str) -> None:
    conn = Database(tmp_path / "plan.sqlite3").connection()
    ids = json.dumps([f"d{i}" for i in range(CHUNKS_PER_READ)])  # as long a list as a group's
    plan = " ".join(str(r[-1]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", ("kb", ids)))
    assert f"USING INDEX {index} " in plan and "knowledge_base_id=" not in plan and "SCAN chunks" not in plan, plan
