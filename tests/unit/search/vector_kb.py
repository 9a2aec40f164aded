"""A small embedded KB for the vector table tests: random unit vectors of width 8 (chunk 1 of a 3+ chunk
document has none)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agentkb.adapters.embedded.index import SqliteIndex
from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
from agentkb.adapters.embedded.sqlite.db import Database
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
