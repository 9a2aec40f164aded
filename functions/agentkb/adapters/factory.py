"""Cached factories: the ports of the configured backend, built lazily once per process."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache, partial
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
        import agentkb.adapters.embedded.sqlite_catalog
        import agentkb.adapters.embedded.sqlite_memory
        import agentkb.adapters.embedded.sqlite_security
        import agentkb.adapters.embedded.sqlite_snapshot  # noqa: F401  (each registers its tables)
        from agentkb.adapters.embedded.sqlite_db import open_database

        return open_database(self.settings.database_path)

    def _require_embedded(self) -> None:
        if self.settings.backend != "embedded":
            raise ConfigurationError("this store has no AWS adapter yet (AGENTKB_BACKEND=aws)")

    @cached_property
    def aws(self) -> AwsPorts:
        return AwsPorts(self.settings)

    @cached_property
    def catalog(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.catalog
        self._require_embedded()
        from agentkb.adapters.embedded.sqlite_catalog import SqliteCatalog

        return SqliteCatalog(self.db)

    @cached_property
    def index(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.index
        self._require_embedded()
        from agentkb.adapters.embedded.sqlite_index import SqliteIndex

        return SqliteIndex(self.db)

    @cached_property
    def embedder(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.embedder
        from agentkb.adapters.embedded.local_embedder import local_embedder

        return local_embedder()

    @cached_property
    def tokenizer(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.tokenizer
        from agentkb.adapters.embedded.local_embedder import local_tokenizer

        return local_tokenizer()

    @cached_property
    def reranker(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.reranker
        return UnavailableReranker()

    @cached_property
    def keys(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.keys
        self._require_embedded()
        from agentkb.adapters.embedded.sqlite_security import SqliteKeyStore

        return SqliteKeyStore(self.db)

    @cached_property
    def secrets(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.secrets
        from agentkb.adapters.embedded.sqlite_security import FileSecretStore

        return FileSecretStore(self.settings.data_dir)

    @cached_property
    def rate_limiter(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.rate_limiter
        self._require_embedded()
        from agentkb.adapters.embedded.sqlite_security import SqliteRateLimiter

        return SqliteRateLimiter(self.db)

    @cached_property
    def embedding_cache(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.embedding_cache
        self._require_embedded()
        from agentkb.adapters.embedded.sqlite_security import SqliteEmbeddingCache

        return SqliteEmbeddingCache(self.db)

    @cached_property
    def snapshots(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.snapshots
        self._require_embedded()
        from agentkb.adapters.embedded.sqlite_snapshot import SqliteSnapshotStore

        return SqliteSnapshotStore(self.db)

    @cached_property
    def memories(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.memories
        self._require_embedded()
        from agentkb.adapters.embedded.sqlite_memory import SqliteMemoryStore

        return SqliteMemoryStore(self.db)

    @cached_property
    def idempotency(self) -> Any:
        if self.settings.backend == "aws":
            return self.aws.idempotency
        self._require_embedded()
        from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency

        def sqlite_layer() -> Any:
            from agentkb.adapters.embedded.sqlite_idempotency import SqlitePersistenceLayer

            return SqlitePersistenceLayer(self.db)

        return PowertoolsIdempotency(sqlite_layer)

    @cached_property
    def graph(self) -> Any:
        """The AWS graph store; None on the embedded engine (graph_routes builds it over `db`)."""
        return self.aws.graph if self.settings.backend == "aws" else None


@lru_cache(maxsize=1)
def get_container() -> Container:
    """The process-wide container for the current settings."""
    return Container(get_settings())


def reset_container() -> None:
    get_container.cache_clear()


class AwsPorts:
    """The AWS adapters (AGENTKB_BACKEND=aws). Nothing here runs at import: boto3 clients, credentials and the
    signed OpenSearch transport are built on first use, then reused for the life of the execution environment."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _required(self, name: str) -> str:
        value = getattr(self.settings, name)
        if not value:
            raise ConfigurationError(f"AGENTKB_{name.upper()} is required with AGENTKB_BACKEND=aws")
        return str(value)

    def client(self, service: str, read_timeout_s: float = 10.0, max_attempts: int = 3) -> Callable[[], Any]:
        from agentkb.adapters.aws.dynamodb_tables import aws_client

        return partial(aws_client, service, self.settings.region, read_timeout_s, max_attempts)

    @cached_property
    def catalog(self) -> Any:
        from agentkb.adapters.aws.dynamodb_catalog import DynamoDbCatalog

        return DynamoDbCatalog(self.client("dynamodb"), self._required("catalog_table"))

    @cached_property
    def opensearch(self) -> Any:
        """The collection's signed JSON client, shared by the document and memory indexes (no I/O until used)."""
        from agentkb.adapters.aws.aws_http import JsonClient, SigV4Transport

        return JsonClient(SigV4Transport(self._required("opensearch_endpoint"), self._required("region")))

    @cached_property
    def index(self) -> Any:
        from agentkb.adapters.aws.opensearch_index import OpenSearchIndex
        from agentkb.models.domain import EmbeddingProfile

        profile = EmbeddingProfile(self.embedder.model_id, self.embedder.dimension)
        return OpenSearchIndex(self.opensearch, self.catalog, self.catalog,
                               prefix=self.settings.opensearch_index_prefix,
                               generation=self.settings.opensearch_generation, default_profile=profile)

    @cached_property
    def embedder(self) -> Any:
        from agentkb.adapters.aws.bedrock import TITAN_V2, BedrockEmbedder

        client = self.client("bedrock-runtime", self.settings.embed_timeout_ms / 1000, max_attempts=2)
        return BedrockEmbedder(client, self.settings.embedding_model or TITAN_V2,
                               self.settings.embedding_dimension or 1024)

    @cached_property
    def tokenizer(self) -> Any:
        from agentkb.adapters.aws.aws_tokenizer import ApproximateTokenizer

        return ApproximateTokenizer()

    @cached_property
    def reranker(self) -> Any:
        from agentkb.adapters.aws.bedrock import BedrockReranker

        return BedrockReranker(self.client("bedrock-agent-runtime", 10.0, max_attempts=2), self.settings.region,
                               self.settings.rerank_model_arn)

    @cached_property
    def keys(self) -> Any:
        from agentkb.adapters.aws.dynamodb_security import DynamoDbKeyStore

        return DynamoDbKeyStore(self.client("dynamodb"), self._required("keys_table"))

    @cached_property
    def secrets(self) -> Any:
        from agentkb.adapters.aws.aws_secrets import AwsSecretStore

        return AwsSecretStore(self.settings.secret_arn, self.client("secretsmanager"))

    @cached_property
    def rate_limiter(self) -> Any:
        from agentkb.adapters.aws.dynamodb_security import DynamoDbRateLimiter

        return DynamoDbRateLimiter(self.client("dynamodb"), self._required("rate_limit_table"))

    @cached_property
    def embedding_cache(self) -> Any:
        from agentkb.adapters.aws.dynamodb_security import DynamoDbEmbeddingCache

        return DynamoDbEmbeddingCache(self.client("dynamodb"), self._required("catalog_table"))

    @cached_property
    def snapshots(self) -> Any:
        from agentkb.adapters.aws.dynamodb_snapshot import DynamoDbSnapshotStore

        return DynamoDbSnapshotStore(self.client("dynamodb"), self._required("snapshot_table"), self.client("s3"),
                                     self.settings.bucket, self.catalog)

    @cached_property
    def memories(self) -> Any:
        """DynamoDB (the truth) plus, when a collection is configured, the OpenSearch memory legs past ~10k."""
        from agentkb.adapters.aws.dynamodb_memory import DynamoDbMemoryStore

        truth = DynamoDbMemoryStore(self.client("dynamodb"), self._required("memory_table"))
        if not self.settings.opensearch_endpoint:
            return truth
        from agentkb.adapters.aws.indexed_memory import IndexedMemoryStore
        from agentkb.adapters.aws.opensearch_memory import OpenSearchMemoryIndex

        return IndexedMemoryStore(truth, OpenSearchMemoryIndex(
            self.opensearch, prefix=self.settings.opensearch_index_prefix,
            generation=self.settings.opensearch_generation))

    @cached_property
    def graph(self) -> Any:
        from agentkb.adapters.aws.dynamodb_graph import DynamoDbGraphStore

        return DynamoDbGraphStore(self.client("dynamodb"), self._required("graph_table"))

    @cached_property
    def idempotency(self) -> Any:
        from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency, dynamodb_persistence

        return PowertoolsIdempotency(dynamodb_persistence(self.client("dynamodb"), self._required("idempotency_table")))

    def read_object(self, bucket: str, key: str) -> bytes:
        """An uploaded object's bytes (the ingest queue's S3 notifications)."""
        from agentkb.adapters.aws.dynamodb_tables import guarded

        s3 = self.client("s3")()
        body: bytes = guarded("s3", lambda: s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        return body
