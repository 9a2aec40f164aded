"""The scale benchmark's data: SciFact ingested once (the real ~17k-chunk KB, its vectors and texts), and an N-chunk KB
built from it: each vector a real chunk vector plus small Gaussian noise, renormalised; each text a real chunk's.

The N-chunk KB is written through the embedded index's bulk path (`SqliteIndex.write_documents`: documents whose
chunks carry their vectors, no embedding), so its build time is also the bulk-append rate.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentkb.models.domain import Chunk, Document, KnowledgeBase

CHUNKS_PER_DOCUMENT = 4
BATCH_DOCUMENTS = 2_500  # one transaction each (10k chunks)
CREATED = "2026-01-01T00:00:00Z"


@dataclass
class RealChunks:
    contents: list[str]
    contexts: list[str]
    vectors: np.ndarray  # float32 [n, d], unit length


def real_chunks(conn: sqlite3.Connection, kb_id: str) -> RealChunks:
    rows = conn.execute("SELECT content, context, embedding FROM chunks WHERE knowledge_base_id = ? AND"
                        " embedding IS NOT NULL ORDER BY rowid", (kb_id,)).fetchall()
    vectors = np.frombuffer(b"".join(r[2] for r in rows), np.float32).reshape(len(rows), -1)
    return RealChunks([r[0] for r in rows], [r[1] for r in rows], vectors)


def near_vectors(real: np.ndarray, picks: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """Each picked real vector plus N(0, noise^2) per dimension, renormalised."""
    out = real[picks] + rng.standard_normal((len(picks), real.shape[1])).astype(np.float32) * noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out.astype(np.float32)


def synthetic_documents(kb: KnowledgeBase, real: RealChunks, start: int, count: int, noise: float,
                        rng: np.random.Generator) -> list[tuple[Document, list[Chunk]]]:
    """Documents start..start+count-1 of the synthetic KB, CHUNKS_PER_DOCUMENT chunks each."""
    picks = rng.integers(0, len(real.contents), count * CHUNKS_PER_DOCUMENT)
    vectors = near_vectors(real.vectors, picks, noise, rng)
    out = []
    for d in range(count):
        doc_id = f"{kb.id}-d{start + d}"
        chunks = []
        for i in range(CHUNKS_PER_DOCUMENT):
            j = d * CHUNKS_PER_DOCUMENT + i
            content = real.contents[picks[j]]
            chunks.append(Chunk(f"{doc_id}:1:{i}", doc_id, i, content, len(content.split()),
                                hashlib.sha256(content.encode()).hexdigest(),
                                vectors[j],  # type: ignore[arg-type]  (an array: the bulk path takes one)
                                context=real.contexts[picks[j]]))
        out.append((Document(doc_id, kb.id, kb.workspace_id, f"syn-{start + d}", None, f"h-{doc_id}", {},
                             len(chunks), sum(c.token_count for c in chunks), CREATED), chunks))
    return out


def build(index: Any, kb: KnowledgeBase, real: RealChunks, n_chunks: int, noise: float, seed: int) -> dict[str, float]:
    """Write the synthetic KB through the bulk path; the seconds spent writing, excluding data generation."""
    rng = np.random.default_rng(seed)
    documents = -(-n_chunks // CHUNKS_PER_DOCUMENT)
    writing, made = 0.0, 0
    for start in range(0, documents, BATCH_DOCUMENTS):
        batch = synthetic_documents(kb, real, start, min(BATCH_DOCUMENTS, documents - start), noise, rng)
        t0 = time.perf_counter()
        index.write_documents(kb, batch)
        writing += time.perf_counter() - t0
        made += sum(len(c) for _, c in batch)
    return {"chunks": made, "write_s": round(writing, 2), "bulk_rows_per_s": round(made / writing, 1)}
