"""Ports: what services need from the world. Adapters implement them; services never import adapters.

Shaped for both engines: nothing here speaks SQL or DSL, writes are batches, and an index may lag writes, so
read-after-write guarantees live in the stores. One module per responsibility; every port is re-exported here,
so `from agentkb.ports import Index` stays the one way to name a port.
"""

from agentkb.ports.access import KeyStore, RateLimiter, SecretStore
from agentkb.ports.catalog import Catalog
from agentkb.ports.embedding import Embedder, EmbeddingCache, Reranker, Tokenizer
from agentkb.ports.graph import GraphStore
from agentkb.ports.index import Index, IndexingQueue
from agentkb.ports.invocation import Idempotency, InvocationDeadline, ObjectReader, RemainingTime
from agentkb.ports.memory import MemoryStore, RecallTraceStore
from agentkb.ports.snapshot import SnapshotStore

__all__ = [
    "Catalog",
    "Embedder",
    "EmbeddingCache",
    "GraphStore",
    "Idempotency",
    "Index",
    "IndexingQueue",
    "InvocationDeadline",
    "KeyStore",
    "MemoryStore",
    "ObjectReader",
    "RateLimiter",
    "RecallTraceStore",
    "RemainingTime",
    "Reranker",
    "SecretStore",
    "SnapshotStore",
    "Tokenizer",
]
