"""The embedded engine's ports (AGENTKB_BACKEND=embedded): one SQLite file, the local ONNX model, local files.

Nothing runs before first use: the database opens with the first port that needs it, the model loads with the
first embedding, and each adapter module is imported by the method that builds its port.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from agentkb.config import Settings
from agentkb.models.engine import EMBEDDED, EngineTraits

if TYPE_CHECKING:
    from agentkb.adapters.embedded.sqlite.db import Database
    from agentkb.composition import Ports
    from agentkb.ports import (
        Catalog,
        Embedder,
        EmbeddingCache,
        GraphStore,
        Idempotency,
        Index,
        IndexingQueue,
        InvocationDeadline,
        KeyStore,
        MemoryStore,
        ObjectReader,
        RateLimiter,
        RecallTraceStore,
        Reranker,
        SecretStore,
        SnapshotStore,
        Tokenizer,
    )


class EmbeddedBuilder:
    """Builds each embedded adapter over the one database of `settings.database_path`."""

    engine: EngineTraits = EMBEDDED

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @cached_property
    def database(self) -> Database:
        # Every module that registers tables is imported before the first connection: a schema applied later
        # would run its DDL script (and so a COMMIT) on a connection that might be inside a transaction.
        import agentkb.adapters.embedded.sqlite.catalog
        import agentkb.adapters.embedded.sqlite.embedding_cache
        import agentkb.adapters.embedded.sqlite.graph.store
        import agentkb.adapters.embedded.sqlite.idempotency
        import agentkb.adapters.embedded.sqlite.indexing
        import agentkb.adapters.embedded.sqlite.memory.store
        import agentkb.adapters.embedded.sqlite.security
        import agentkb.adapters.embedded.sqlite.snapshot  # noqa: F401
        from agentkb.adapters.embedded.sqlite.db import open_database
        from agentkb.adapters.embedded.vectors.blas_threads import limit_blas_threads

        limit_blas_threads()  # the engine's vector scans: one BLAS thread (blas_threads.py says why)
        return open_database(self.settings.database_path)

    def catalog(self, ports: Ports) -> Catalog:
        from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog

        return SqliteCatalog(self.database)

    def index(self, ports: Ports) -> Index:
        from agentkb.adapters.embedded.index import SqliteIndex

        return SqliteIndex(self.database)

    def embedder(self, ports: Ports) -> Embedder:
        from agentkb.adapters.embedded.embedder import local_embedder

        return local_embedder()

    def tokenizer(self, ports: Ports) -> Tokenizer:
        from agentkb.adapters.embedded.embedder import local_tokenizer

        return local_tokenizer()

    def reranker(self, ports: Ports) -> Reranker:
        from agentkb.adapters.embedded.basics import UnavailableReranker

        return UnavailableReranker()

    def keys(self, ports: Ports) -> KeyStore:
        from agentkb.adapters.embedded.sqlite.security import SqliteKeyStore

        return SqliteKeyStore(self.database)

    def secrets(self, ports: Ports) -> SecretStore:
        from agentkb.adapters.embedded.sqlite.security import FileSecretStore

        return FileSecretStore(self.settings.data_dir)

    def rate_limiter(self, ports: Ports) -> RateLimiter:
        from agentkb.adapters.embedded.sqlite.security import SqliteRateLimiter

        return SqliteRateLimiter(self.database)

    def embedding_cache(self, ports: Ports) -> EmbeddingCache:
        from agentkb.adapters.embedded.sqlite.embedding_cache import SqliteEmbeddingCache

        return SqliteEmbeddingCache(self.database)

    def snapshots(self, ports: Ports) -> SnapshotStore:
        from agentkb.adapters.embedded.sqlite.snapshot import SqliteSnapshotStore

        return SqliteSnapshotStore(self.database)

    def memories(self, ports: Ports) -> MemoryStore:
        from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore

        return SqliteMemoryStore(self.database)

    def graph(self, ports: Ports) -> GraphStore:
        from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore

        return SqliteGraphStore(self.database)

    def idempotency(self, ports: Ports) -> Idempotency:
        from agentkb.adapters.embedded.sqlite.idempotency import SqlitePersistenceLayer
        from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency

        database = self.database
        return PowertoolsIdempotency(lambda: SqlitePersistenceLayer(database))

    def objects(self, ports: Ports) -> ObjectReader:
        from agentkb.adapters.embedded.basics import LocalObjectReader

        return LocalObjectReader(self.settings.data_dir / "objects")

    def deadline(self, ports: Ports) -> InvocationDeadline:
        from agentkb.adapters.embedded.basics import NoDeadline

        return NoDeadline()

    def indexing_queue(self, ports: Ports) -> IndexingQueue:
        from agentkb.adapters.embedded.sqlite.indexing import SqliteIndexingQueue

        return SqliteIndexingQueue(self.database)

    def traces(self, ports: Ports) -> RecallTraceStore:
        from agentkb.adapters.embedded.sqlite.traces import SqliteRecallTraceStore

        return SqliteRecallTraceStore(self.database)
