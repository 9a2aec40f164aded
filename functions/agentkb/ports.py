"""Ports: what services need from the world. Adapters implement them; services never import adapters.

Shaped for both engines: nothing here speaks SQL or DSL, writes are batches, and an index may lag writes
(OpenSearch Serverless shows writes after ~10-60 s), so read-after-write guarantees live in the stores.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.domain import (
        ApiKeyRecord,
        Chunk,
        Document,
        DocumentHit,
        IndexHit,
        IndexQuery,
        KnowledgeBase,
        LegHit,
        RateDecision,
        RerankOutcome,
    )
    from agentkb.models.graph_records import (
        EntityRecord,
        GraphBatch,
        GraphMatchPage,
        GraphMatchQuery,
        NeighbourhoodTotals,
        ProofRecord,
        RelationRecord,
        WriteCounts,
    )
    from agentkb.models.idempotency import IdempotentCall, IdempotentResult
    from agentkb.models.memory import IdempotencyRecord, MemoryRecord, StoredMemory
    from agentkb.models.memory_detail import MemoryChange, MemoryDetail, MemoryListQuery, MemoryPage
    from agentkb.models.recall import MemoryView, RecallScope
    from agentkb.models.recall_trace import RecallTrace, UsageEvent
    from agentkb.models.snapshot import StoredSnapshot


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised vectors of one embedding profile."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_query(self, text: str) -> list[float]: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...


class Tokenizer(Protocol):
    """Counts and splits text in the embedding model's tokens (chunking and token budgets)."""

    def count(self, text: str) -> int: ...

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of every token, in order, without special tokens."""
        ...


class Reranker(Protocol):
    def rerank(self, query: str, passages: Sequence[str], model: str) -> RerankOutcome: ...


class Catalog(Protocol):
    """Workspaces, knowledge bases (with tag definitions) and the document registry."""

    def create_knowledge_base(self, kb: KnowledgeBase) -> None: ...

    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None: ...

    def find_knowledge_base_by_name(self, workspace_id: str, name: str) -> KnowledgeBase | None: ...

    def list_knowledge_bases(self, workspace_id: str) -> list[KnowledgeBase]: ...

    def get_document(self, kb_id: str, document_id: str) -> Document | None: ...

    def find_document_by_name(self, kb_id: str, name: str) -> Document | None: ...

    def list_documents(self, kb_id: str, limit: int, cursor: str | None = None) -> tuple[list[Document], str | None]:
        """A page of the KB's documents and the opaque cursor of the next page (None after the last)."""
        ...

    def document_content(self, kb_id: str, document_id: str) -> str | None:
        """The document's full text as last written (None when unknown or never stored)."""
        ...

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """The KB and its document registry (the index has removed the chunks first)."""
        ...

    def workspace_search_mode(self, workspace_id: str) -> str | None:
        """The workspace's default search mode policy, or None for the deployment default."""
        ...


class Index(Protocol):
    """Chunk storage and retrieval legs. A document write is atomic: all chunks visible or none."""

    def write_document(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk]) -> None:
        """Index a document's chunks (replacing any earlier version of the same document id)."""
        ...

    def delete_document(self, kb: KnowledgeBase, document_id: str) -> None: ...

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Every chunk, vector and index entry of the KB."""
        ...

    def lexical_search(self, query: IndexQuery) -> list[LegHit]:
        """BM25 leg over chunks (their context included): best hits per knowledge base, each KB capped at
        `limit_per_kb`, best first."""
        ...

    def document_search(self, query: IndexQuery) -> list[DocumentHit]:
        """BM25 leg over whole documents (title, headings and text): best documents per KB, best first."""
        ...

    def vector_search(self, query: IndexQuery) -> list[LegHit]:
        """Filtered exact/approximate kNN leg by cosine; `score` is the cosine similarity."""
        ...

    def filter_search(self, query: IndexQuery) -> list[LegHit]:
        """Tag-only leg: matching chunks in a deterministic order (document name, chunk index)."""
        ...

    def hydrate(self, workspace_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexHit]:
        """Content, document fields and metadata of the chunks a search returns (missing ids are left out)."""
        ...

    def similarities(self, chunk_ids: Sequence[str], vector: Sequence[float]) -> dict[str, float]:
        """Cosine similarity of stored chunks to a vector (fills `similarity` for lexical-only hits)."""
        ...


class IndexingQueue(Protocol):
    """Documents accepted now and indexed in the background (202): the record shows `indexing` until then."""

    def enqueue(self, document: Document) -> None:
        """Store the record (status `indexing`, text included; earlier chunks stay searchable) and queue it."""
        ...

    def done(self, document: Document, error: str | None = None) -> None:
        """Indexing ended: dequeue it; with an error the record's status becomes `failed` with the reason."""
        ...


class KeyStore(Protocol):
    def put_key(self, record: ApiKeyRecord) -> None: ...

    def get_key(self, key_id: str) -> ApiKeyRecord | None: ...

    def list_keys(self) -> list[ApiKeyRecord]:
        """Every key record (hashes included; callers show ids, principals, reach and status only)."""
        ...

    def revoke_key(self, key_id: str) -> bool:
        """Mark the key revoked (it answers 401 from the next request on); False when there is no such key."""
        ...


class SecretStore(Protocol):
    def key_pepper(self) -> bytes: ...


class RateLimiter(Protocol):
    def hit(self, key_id: str, limit: int, now: float) -> RateDecision:
        """Count one request in the caller's current one-minute window."""
        ...


class EmbeddingCache(Protocol):
    """Vectors by (profile key, content hash), so unchanged text is never embedded twice."""

    def get_many(self, profile_key: str, content_hashes: Sequence[str]) -> dict[str, list[float]]: ...

    def put_many(self, profile_key: str, vectors: dict[str, list[float]]) -> None: ...


# ---- Knowledge graph (issue 5; shared with recall) -------------------------------------------------------------


class GraphStore(Protocol):
    """Entities, relations and proofs per workspace. Every bound (caps, limits) is applied inside the query.

    Shared with recall: memories add weighted, proof-less relations (to workspace entities or to ids of recall's
    own entity space, never stored as entities); graph search only ever returns relations that carry proofs.
    """

    def upsert(self, workspace_id: str, batch: GraphBatch) -> WriteCounts:
        """Batch upsert by id (and removal of `batch.removed_entities`), planned by services.graph_changes; atomic on
        the embedded engine. Bumps the graph version only when stored content actually changed."""
        ...

    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]: ...

    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]: ...

    def identity_owners(self, workspace_id: str, identities: Sequence[tuple[str, str, str]]) -> dict[
            tuple[str, str, str], str]:
        """(kind, project id or "", identity key) -> the entity id that holds it."""
        ...

    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """(entity count of the workspace, document frequency per term)."""
        ...

    def match_entities(self, query: GraphMatchQuery) -> GraphMatchPage:
        """Ranked matches (tier, score, kind, label, id) with the kind/project scope applied before ranking."""
        ...

    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[EntityRecord]: ...

    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[ProofRecord]: ...

    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[RelationRecord]]:
        """Per entity: its proven relations (either direction), best trust/confidence first then id, capped."""
        ...

    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> NeighbourhoodTotals: ...

    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], min_weight: float,
                   per_entity_cap: int) -> list[tuple[str, str, str, float]]:
        """One bounded BFS step: (from, to, kind, weight) with weight >= min_weight, heaviest first, capped."""
        ...

    def source_hash(self, workspace_id: str) -> str:
        """sha256 of the canonical timestamp-free graph; cached per graph version."""
        ...

    def workspaces(self) -> list[str]:
        """Every workspace that holds a graph (operator commands: migration)."""
        ...

    def export(self, workspace_id: str) -> tuple[list[str], list[RelationRecord], list[str]]:
        """Everything stored for a workspace, by id: entity documents, relations, proof documents (as stored)."""
        ...


# ---- Snapshots (issue 4) ---------------------------------------------------------------------------------------


class SnapshotStore(Protocol):
    """Built context snapshots, kept as the exact response bytes; one per (workspace, run, attempt)."""

    def get(self, snapshot_id: str) -> StoredSnapshot | None: ...

    def put_if_absent(self, snapshot: StoredSnapshot) -> StoredSnapshot:
        """Store the snapshot unless its id exists; returns what is stored (the earlier one on a race)."""
        ...

    def index_version(self, knowledge_base_id: str) -> int | None:
        """The knowledge base's index version: bumped by every document write or delete (None: unknown KB)."""
        ...


# ---- Invocation plumbing: the request deadline and uploaded objects --------------------------------------------


class InvocationDeadline(Protocol):
    """Bounds the adapters' own retries by the current invocation's remaining time (None: no known deadline)."""

    def set_remaining(self, remaining_ms: int | None) -> None: ...


class ObjectReader(Protocol):
    """The bytes of an uploaded object (the ingest queue's upload notifications name bucket and key)."""

    def read_object(self, bucket: str, key: str) -> bytes: ...


# ---- Idempotency (Powertools persistence layer) ----------------------------------------------------------------


@runtime_checkable
class RemainingTime(Protocol):
    """How long the current invocation may still run (a Lambda context has this method)."""

    def get_remaining_time_in_millis(self) -> int: ...


class Idempotency(Protocol):
    """Runs an operation once per key across every process: repeats replay the recorded result.

    Raises `OperationInProgress` while another run of the key holds it (until it ends, or until the invocation
    deadline it registered passes) and `IdempotencyKeyReused` when the key's recorded payload hash differs. An
    operation that raises leaves no record, so the next call runs it again.
    """

    def run_once(self, call: IdempotentCall, operation: Callable[[], dict[str, Any]],
                 deadline: RemainingTime | None = None) -> IdempotentResult: ...


# ---- Agent memory (issue 3: recall) -----------------------------------------------------------------------------



class MemoryStore(Protocol):
    """Memory revisions per workspace. Every recall read applies the RecallScope inside its query, before ranking."""

    def find_live(self, workspace_id: str, name: str) -> StoredMemory | None:
        """The current (not superseded) revision of a memory name."""
        ...

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        """(body hash, memory) of an idempotency key already used by this principal in this workspace."""
        ...

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        """Store a new revision atomically (the live revision of the same name becomes superseded)."""
        ...

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Bulk load of memories with new names in one transaction."""
        ...

    def vector_dimension(self, workspace_id: str) -> int | None: ...

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
        """Exact cosine top-k over eligible memories, `boosts` added for ranking only: (id, cosine).

        A boost never makes a memory eligible: only eligible memories are ranked at all."""
        ...

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        ...

    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        """BM25 top-k over eligible memories: (id, relevance > 0), best first."""
        ...

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]: ...

    def linked_memories(self, scope: RecallScope, entity_ids: Sequence[str],
                        per_entity_cap: int) -> list[tuple[int, str]]:
        """Eligible memories linked to the entities: (memory_id, entity_id), capped per entity."""
        ...

    def views(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryView]: ...

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        """New names only, all or nothing (at most 24); a taken name fails the batch with Conflict."""
        ...

    def get(self, workspace_id: str, memory_id: int) -> MemoryDetail | None: ...

    def list_memories(self, query: MemoryListQuery) -> MemoryPage:
        """Newest first, filtered, paged by `before_id`."""
        ...

    def update(self, workspace_id: str, memory_id: int, change: MemoryChange) -> MemoryDetail | None:
        """Change one memory in place (atomic); recall sees the change at once. None when it does not exist."""
        ...

    def delete(self, workspace_id: str, memory_id: int) -> list[int]:
        """Forget every revision of the memory's name: store, vectors, indexes, entity links. The ids deleted."""
        ...


class RecallTraceStore(Protocol):
    """OB1 recall traces and the usage reported on them (the input of usage feedback in ranking)."""

    def put(self, trace: RecallTrace) -> None: ...

    def get(self, request_id: str) -> RecallTrace | None: ...

    def record_usage(self, request_id: str, used: Sequence[int], ignored: Mapping[int, str | None],
                     at: float) -> RecallTrace | None:
        """Mark the trace's items used / ignored and keep one usage event per (recall, memory); None: no trace."""
        ...

    def usage_events(self, workspace_id: str, since: float, limit: int) -> list[UsageEvent]:
        """The workspace's usage events at or after `since`, newest first, at most `limit`."""
        ...
