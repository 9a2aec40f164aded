"""Cached factories: the ports of the configured backend, built lazily once per process."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

from agentkb.config import ConfigurationError, Settings, get_settings
from agentkb.models.domain import RerankOutcome


class UnavailableReranker:
    """No reranker ships its weights offline: locally reranking is honestly `unavailable`."""

    def rerank(self, query: str, passages: Any, model: str) -> RerankOutcome:
        return RerankOutcome("unavailable", reason="no reranking model is available in the embedded engine")


@dataclass
class Container:
    """Every port an API route may need, for one backend; attributes are created on first use."""

    settings: Settings

    @cached_property
    def db(self) -> Any:
        import agentkb.adapters.sqlite_catalog
        import agentkb.adapters.sqlite_memory
        import agentkb.adapters.sqlite_security
        import agentkb.adapters.sqlite_snapshot  # noqa: F401  (each registers its tables)
        from agentkb.adapters.sqlite_db import open_database

        return open_database(self.settings.database_path)

    def _require_embedded(self) -> None:
        if self.settings.backend != "embedded":
            raise ConfigurationError("the AWS adapters are not part of this build yet (AGENTKB_BACKEND=aws)")

    @cached_property
    def catalog(self) -> Any:
        self._require_embedded()
        from agentkb.adapters.sqlite_catalog import SqliteCatalog

        return SqliteCatalog(self.db)

    @cached_property
    def index(self) -> Any:
        self._require_embedded()
        from agentkb.adapters.sqlite_index import SqliteIndex

        return SqliteIndex(self.db)

    @cached_property
    def embedder(self) -> Any:
        from agentkb.adapters.local_embedder import local_embedder

        return local_embedder()

    @cached_property
    def tokenizer(self) -> Any:
        from agentkb.adapters.local_embedder import local_tokenizer

        return local_tokenizer()

    @cached_property
    def reranker(self) -> Any:
        return UnavailableReranker()

    @cached_property
    def keys(self) -> Any:
        self._require_embedded()
        from agentkb.adapters.sqlite_security import SqliteKeyStore

        return SqliteKeyStore(self.db)

    @cached_property
    def secrets(self) -> Any:
        from agentkb.adapters.sqlite_security import FileSecretStore

        return FileSecretStore(self.settings.data_dir)

    @cached_property
    def rate_limiter(self) -> Any:
        self._require_embedded()
        from agentkb.adapters.sqlite_security import SqliteRateLimiter

        return SqliteRateLimiter(self.db)

    @cached_property
    def embedding_cache(self) -> Any:
        self._require_embedded()
        from agentkb.adapters.sqlite_security import SqliteEmbeddingCache

        return SqliteEmbeddingCache(self.db)

    @cached_property
    def snapshots(self) -> Any:
        self._require_embedded()
        from agentkb.adapters.sqlite_snapshot import SqliteSnapshotStore

        return SqliteSnapshotStore(self.db)

    @cached_property
    def memories(self) -> Any:
        self._require_embedded()
        from agentkb.adapters.sqlite_memory import SqliteMemoryStore

        return SqliteMemoryStore(self.db)


@lru_cache(maxsize=1)
def get_container() -> Container:
    """The process-wide container for the current settings."""
    return Container(get_settings())


def reset_container() -> None:
    get_container.cache_clear()
