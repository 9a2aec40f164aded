"""The contract corpus: two workspaces, three knowledge bases, tagged documents with 4-dimensional vectors."""

from __future__ import annotations

import math

from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase, TagDefinition

PROFILE = EmbeddingProfile("contract-model", 4)
CREATED = "2024-01-01T00:00:00Z"
TAGS = (TagDefinition("team", "text", "text1"), TagDefinition("priority", "number", "number1"),
        TagDefinition("published", "date", "date1"), TagDefinition("internal", "boolean", "boolean1"))

KB_A = KnowledgeBase("kb-a", "ws1", "Runbooks", None, PROFILE, TAGS, CREATED)
KB_B = KnowledgeBase("kb-b", "ws1", "Notes", None, PROFILE, (), CREATED)
KB_C = KnowledgeBase("kb-c", "ws2", "Tenant two", None, PROFILE, (), CREATED)
KNOWLEDGE_BASES = (KB_A, KB_B, KB_C)


def _unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


# (kb, document id, name, source url, tags, [(content, vector)])
DOCUMENTS = (
    (KB_A, "doc-a1", "alpha-guide", "https://docs.example/alpha",
     {"team": "Platform", "priority": 1.0, "published": "2024-01-10", "internal": True},
     [("Rotate the database credentials every ninety days.", _unit(1, 0, 0, 0)),
      ("Backups run nightly to the archive bucket.", _unit(0, 1, 0, 0))]),
    (KB_A, "doc-a2", "beta-notes", None,
     {"team": "Search", "priority": 3.0, "published": "2024-06-01", "internal": False},
     [("Vector search uses cosine similarity over embeddings.", _unit(0, 0, 1, 0))]),
    (KB_A, "doc-a3", "gamma-untagged", None, {},
     [("Database credentials are stored in the vault.", _unit(0.6, 0.8, 0, 0))]),
    (KB_B, "doc-b1", "delta", None, {},
     [("Credentials for the staging database rotate weekly.", _unit(0.8, 0, 0.6, 0))]),
    (KB_B, "doc-b2", "epsilon", None, {},
     [("Cosine similarity compares embedding directions.", _unit(0, 0, 0.6, 0.8))]),
    (KB_C, "doc-c1", "zeta", None, {},
     [("Database credentials of the other tenant.", _unit(1, 0, 0, 0))]),
)


# The title and headings above a chunk (chunking.py's context): searchable, never part of the content.
CONTEXTS = {"doc-a2": "Search handbook > Relevance tuning"}


def documents() -> list[tuple[KnowledgeBase, Document, list[Chunk]]]:
    out = []
    for kb, doc_id, name, url, tags, pieces in DOCUMENTS:
        chunks = [Chunk(f"{doc_id}:1:{i}", doc_id, i, text, len(text.split()), f"hash-{doc_id}-{i}", vector,
                        context=CONTEXTS.get(doc_id, "")) for i, (text, vector) in enumerate(pieces)]
        document = Document(doc_id, kb.id, kb.workspace_id, name, url, f"hash-{doc_id}", tags, len(chunks),
                            sum(c.token_count for c in chunks), CREATED)
        out.append((kb, document, chunks))
    return out


def chunk_source(chunk_id: str) -> dict[str, object]:
    """The `_source` (HIT_FIELDS) OpenSearch returns for a corpus chunk: used to author recordings."""
    for kb, document, chunks in documents():
        for c in chunks:
            if c.id == chunk_id:
                return {"chunk_id": c.id, "knowledge_base_id": kb.id, "document_id": document.id,
                        "document_name": document.name, "source_url": document.source_url, "content": c.content,
                        "chunk_index": c.chunk_index, "tags": document.tags}
    raise KeyError(chunk_id)


def chunk_vector(chunk_id: str) -> list[float]:
    for _, _, chunks in documents():
        for c in chunks:
            if c.id == chunk_id:
                return list(c.embedding or [])
    raise KeyError(chunk_id)
