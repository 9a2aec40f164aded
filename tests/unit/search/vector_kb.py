"""A small embedded KB for the vector table tests: random unit vectors of width 8 (chunk 1 of a 3+ chunk
document has none)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.vectors import ann, chunk_table, nearest
from agentkb.adapters.embedded.vectors.chunk_table import ChunkTable
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase

WIDTH = 8
KB = KnowledgeBase("kb-v", "ws-v", "Vectors", None, EmbeddingProfile("test-model", WIDTH), (), "2026-01-01T00:00:00Z")


def unit(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(WIDTH)
    return (v / np.linalg.norm(v)).astype(np.float32).tolist()  # type: ignore[no-any-return]


def doc(name: str, n_chunks: int, rng: np.random.Generator, revision: int = 1) -> tuple[Document, list[Chunk]]:
    chunks = [Chunk(f"{name}:{revision}:{i}", name, i, f"text {name} {i}", 3, f"h-{name}-{revision}-{i}",
                    None if i == 1 and n_chunks > 2 else unit(rng)) for i in range(n_chunks)]
    return Document(name, KB.id, KB.workspace_id, name, None, f"h-{name}-{revision}", {}, n_chunks, 3 * n_chunks,
                    "2026-01-01T00:00:00Z", revision), chunks


def make_index(tmp_path: Path) -> SqliteIndex:
    db = Database(tmp_path / "v.sqlite3")
    SqliteCatalog(db).create_knowledge_base(KB)
    return SqliteIndex(db)


def table(index: SqliteIndex) -> ChunkTable:
    return index.tables.get(index.db.connection(), KB.id)


def index_small_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ANN index (and the float16 table beside it) from 300 vectors instead of the measured threshold."""
    monkeypatch.setattr(chunk_table, "THRESHOLD", 300)
    monkeypatch.setattr(chunk_table, "DROP_BELOW", 150)
    monkeypatch.setattr(ann, "lists_for", lambda n: 16)
    monkeypatch.setattr(nearest, "EXACT_ROWS", 20)


def large_index(tmp_path: Path, seed: int, docs: int = 120, chunks: int = 5) -> SqliteIndex:
    """600 chunks, 480 with a vector: past index_small_tables' threshold."""
    index = make_index(tmp_path)
    rng = np.random.default_rng(seed)
    index.write_documents(KB, [doc(f"d{i}", chunks, rng) for i in range(docs)])
    return index
