"""Domain records shared by services and adapters (plain dataclasses: cheap on the hot path)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

FieldType = Literal["text", "number", "date", "boolean"]
DocumentStatus = Literal["indexing", "ready", "failed"]
SecretPolicy = Literal["flag", "refuse"]
TagValue = str | float | bool

# Typed slots per knowledge base: a tag name maps to one slot of its field type.
TAG_SLOTS: dict[str, int] = {"text": 7, "number": 5, "date": 2, "boolean": 3}


@dataclass(frozen=True, slots=True)
class EmbeddingProfile:
    """The embedding model and dimension every vector of a knowledge base was made with."""

    model: str
    dimension: int

    @property
    def key(self) -> str:
        return f"{self.model}@{self.dimension}"


@dataclass(frozen=True, slots=True)
class TagDefinition:
    tag_name: str
    field_type: FieldType
    slot: str  # e.g. "text1", "number2": stable column / field name in every engine


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    id: str
    workspace_id: str
    name: str
    description: str | None
    profile: EmbeddingProfile
    tag_definitions: tuple[TagDefinition, ...]
    created_at: str
    secret_policy: SecretPolicy = "flag"  # documents carrying a detected secret: flagged per chunk, or refused

    def tag(self, name: str) -> TagDefinition | None:
        return next((t for t in self.tag_definitions if t.tag_name == name), None)


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    knowledge_base_id: str
    workspace_id: str
    name: str
    source_url: str | None
    content_hash: str
    tags: dict[str, TagValue]  # tag name -> value (typed per definition)
    chunk_count: int
    token_count: int
    created_at: str
    revision: int = 1
    source_path: str | None = None  # the file a bulk ingest read it from (identity: see services/bulk_ingest)
    status: DocumentStatus = "ready"
    error: str | None = None
    content: str | None = None  # the full text on writes; catalog reads leave it out (Catalog.document_content)
    secret_chunks: tuple[int, ...] | None = None  # indexes of chunks with a detected secret; None: never scanned


@dataclass(frozen=True, slots=True)
class Chunk:
    """One indexed piece of a document, with its vector."""

    id: str
    document_id: str
    chunk_index: int
    content: str
    token_count: int
    content_hash: str
    embedding: Sequence[float] | None = None  # a list from an embedder, an array('f') read from storage
    pages: tuple[int, ...] = ()  # PDF pages the chunk's text comes from (1-based), empty for other formats
    context: str = ""  # the document title and section headings above the chunk: indexed with it by both legs
    secret: bool = False  # the secret detector found a credential in it (services/document_secrets.py)


@dataclass(frozen=True, slots=True)
class CompiledTagFilter:
    """A tag filter resolved against the KB definitions: engines translate it to SQL or DSL."""

    slot: str
    field_type: FieldType
    operator: str
    value: TagValue
    value_to: TagValue | None = None


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """One retrieval leg's input: scope, filters, optional text and/or vector, and a per-KB limit."""

    workspace_id: str
    knowledge_base_ids: tuple[str, ...]
    filters: tuple[CompiledTagFilter, ...] = ()
    text: str | None = None
    vector: list[float] | None = None
    limit_per_kb: int = 10


@dataclass(frozen=True, slots=True)
class LegHit:
    """A chunk as a retrieval leg answers it: ids and the leg-local score (BM25, cosine, or 1.0 for tag-only).

    Content and metadata are fetched (`Index.hydrate`) only for the chunks a search finally returns.
    """

    chunk_id: str
    knowledge_base_id: str
    document_id: str
    score: float


@dataclass(frozen=True, slots=True)
class DocumentHit:
    """A document as the whole-document BM25 leg answers it."""

    document_id: str
    knowledge_base_id: str
    score: float


@dataclass(frozen=True, slots=True)
class IndexHit:
    """A hydrated chunk: what a search result is made of (`similarity` is cosine when known)."""

    chunk_id: str
    knowledge_base_id: str
    document_id: str
    document_name: str | None
    source_url: str | None
    content: str
    chunk_index: int
    metadata: dict[str, Any]
    score: float
    similarity: float | None = None
    secret: bool | None = None  # the chunk's stored secret flag; None: stored before chunks were scanned


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    key_id: str
    key_hash: str
    principal: str
    workspaces: tuple[str, ...]
    scopes: tuple[str, ...]
    created_at: str
    revoked: bool = False


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: from an API key, an OAuth access token (`id` is its `sub`, `issuer` its `iss`), or from a
    direct invocation's `principal`."""

    id: str
    workspaces: tuple[str, ...]
    scopes: tuple[str, ...]
    key_id: str | None = None
    issuer: str | None = None

    def can_reach(self, workspace_id: str) -> bool:
        return workspace_id in self.workspaces or "*" in self.workspaces


@dataclass(frozen=True, slots=True)
class RateDecision:
    limit: int
    remaining: int
    reset_epoch: int
    allowed: bool
    retry_after_s: int = 0


@dataclass(slots=True)
class RerankOutcome:
    status: Literal["applied", "unavailable", "skipped"]
    scores: list[float] = field(default_factory=list)  # aligned with the input order when applied
    reason: str | None = None
