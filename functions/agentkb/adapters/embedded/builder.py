"""The embedded engine's ports (AGENTKB_BACKEND=embedded): one SQLite file, the local ONNX model, local files.

Nothing runs before first use: the database opens with the first port that needs it, the model loads with the
first embedding, and each adapter module is imported by the method that builds its port. Each such method is
marked `@builds(PortSet.<port>)` (ports/bundle.py), so mypy checks that what it returns is that port.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from agentkb.config import Settings
from agentkb.models.engine import EMBEDDED, EngineTraits
from agentkb.ports.bundle import PortSet, builds

if TYPE_CHECKING:
    from agentkb.adapters.embedded.basics import LocalObjectReader, NoDeadline, UnavailableReranker
    from agentkb.adapters.embedded.embedder import LocalEmbedder, LocalEmbedders, WordPieceTokenizer
    from agentkb.adapters.embedded.index import SqliteIndex
    from agentkb.adapters.embedded.sqlite.archive import SqliteWorkspaceArchive
    from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog
    from agentkb.adapters.embedded.sqlite.chunk_pages import SqliteChunkPages
    from agentkb.adapters.embedded.sqlite.db import Database
    from agentkb.adapters.embedded.sqlite.embedding_cache import SqliteEmbeddingCache
    from agentkb.adapters.embedded.sqlite.generations import SqliteShadowGenerations
    from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore
    from agentkb.adapters.embedded.sqlite.indexing import SqliteIndexingQueue
    from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore
    from agentkb.adapters.embedded.sqlite.security import FileSecretStore, SqliteKeyStore, SqliteRateLimiter
    from agentkb.adapters.embedded.sqlite.snapshot import SqliteSnapshotStore
    from agentkb.adapters.embedded.sqlite.traces import SqliteRecallTraceStore
    from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency
    from agentkb.composition import Ports


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
        import agentkb.adapters.embedded.sqlite.generations
        import agentkb.adapters.embedded.sqlite.graph.store
        import agentkb.adapters.embedded.sqlite.idempotency_table
        import agentkb.adapters.embedded.sqlite.indexing
        import agentkb.adapters.embedded.sqlite.memory.store
        import agentkb.adapters.embedded.sqlite.security
        import agentkb.adapters.embedded.sqlite.snapshot  # noqa: F401
        from agentkb.adapters.embedded.sqlite.db import open_database
        from agentkb.adapters.embedded.vectors.blas_threads import limit_blas_threads

        limit_blas_threads()  # the engine's vector scans: one BLAS thread (blas_threads.py says why)
        return open_database(self.settings.database_path)

    @builds(PortSet.catalog)
    def catalog(self, ports: Ports) -> SqliteCatalog:
        from agentkb.adapters.embedded.sqlite.catalog import SqliteCatalog

        return SqliteCatalog(self.database)

    @builds(PortSet.index)
    def index(self, ports: Ports) -> SqliteIndex:
        from agentkb.adapters.embedded.index import SqliteIndex

        return SqliteIndex(self.database)

    @builds(PortSet.embedder)
    def embedder(self, ports: Ports) -> LocalEmbedder:
        from agentkb.adapters.embedded.embedder import local_embedder

        return local_embedder()

    @builds(PortSet.tokenizer)
    def tokenizer(self, ports: Ports) -> WordPieceTokenizer:
        from agentkb.adapters.embedded.embedder import local_tokenizer

        return local_tokenizer()

    @builds(PortSet.reranker)
    def reranker(self, ports: Ports) -> UnavailableReranker:
        from agentkb.adapters.embedded.basics import UnavailableReranker

        return UnavailableReranker()

    @builds(PortSet.keys)
    def keys(self, ports: Ports) -> SqliteKeyStore:
        from agentkb.adapters.embedded.sqlite.security import SqliteKeyStore

        return SqliteKeyStore(self.database)

    @builds(PortSet.secrets)
    def secrets(self, ports: Ports) -> FileSecretStore:
        from agentkb.adapters.embedded.sqlite.security import FileSecretStore

        return FileSecretStore(self.settings.data_dir)

    @builds(PortSet.rate_limiter)
    def rate_limiter(self, ports: Ports) -> SqliteRateLimiter:
        from agentkb.adapters.embedded.sqlite.security import SqliteRateLimiter

        return SqliteRateLimiter(self.database)

    @builds(PortSet.embedding_cache)
    def embedding_cache(self, ports: Ports) -> SqliteEmbeddingCache:
        from agentkb.adapters.embedded.sqlite.embedding_cache import SqliteEmbeddingCache

        return SqliteEmbeddingCache(self.database)

    @builds(PortSet.snapshots)
    def snapshots(self, ports: Ports) -> SqliteSnapshotStore:
        from agentkb.adapters.embedded.sqlite.snapshot import SqliteSnapshotStore

        return SqliteSnapshotStore(self.database)

    @builds(PortSet.memories)
    def memories(self, ports: Ports) -> SqliteMemoryStore:
        from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore

        return SqliteMemoryStore(self.database)

    @builds(PortSet.graph)
    def graph(self, ports: Ports) -> SqliteGraphStore:
        from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore

        return SqliteGraphStore(self.database)

    @builds(PortSet.idempotency)
    def idempotency(self, ports: Ports) -> PowertoolsIdempotency:
        from agentkb.adapters.embedded.sqlite.idempotency import SqlitePersistenceLayer
        from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency

        database = self.database
        return PowertoolsIdempotency(lambda: SqlitePersistenceLayer(database))

    @builds(PortSet.objects)
    def objects(self, ports: Ports) -> LocalObjectReader:
        from agentkb.adapters.embedded.basics import LocalObjectReader

        return LocalObjectReader(self.settings.data_dir / "objects")

    @builds(PortSet.deadline)
    def deadline(self, ports: Ports) -> NoDeadline:
        from agentkb.adapters.embedded.basics import NoDeadline

        return NoDeadline()

    @builds(PortSet.indexing_queue)
    def indexing_queue(self, ports: Ports) -> SqliteIndexingQueue:
        from agentkb.adapters.embedded.sqlite.indexing import SqliteIndexingQueue

        return SqliteIndexingQueue(self.database)

    @builds(PortSet.traces)
    def traces(self, ports: Ports) -> SqliteRecallTraceStore:
        from agentkb.adapters.embedded.sqlite.traces import SqliteRecallTraceStore

        return SqliteRecallTraceStore(self.database)

    @builds(PortSet.archive)
    def archive(self, ports: Ports) -> SqliteWorkspaceArchive:
        from agentkb.adapters.embedded.sqlite.archive import SqliteWorkspaceArchive

        return SqliteWorkspaceArchive(self.database)

    @builds(PortSet.embedders)
    def embedders(self, ports: Ports) -> LocalEmbedders:
        from agentkb.adapters.embedded.embedder import LocalEmbedders

        return LocalEmbedders()

    @builds(PortSet.generations)
    def generations(self, ports: Ports) -> SqliteShadowGenerations:
        from agentkb.adapters.embedded.sqlite.generations import SqliteShadowGenerations

        return SqliteShadowGenerations(self.database)

    @builds(PortSet.chunks)
    def chunks(self, ports: Ports) -> SqliteChunkPages:
        from agentkb.adapters.embedded.sqlite.chunk_pages import SqliteChunkPages

        return SqliteChunkPages(self.database)
