"""The AWS engine's ports (AGENTKB_BACKEND=aws): DynamoDB, OpenSearch Serverless, Bedrock, Secrets Manager, S3.

Nothing runs at import or construction: boto3 clients, credentials and the signed OpenSearch transport are
built on first use (clients are factories), then reused for the life of the execution environment. Each method
imports only its own adapter module, so a function imports only the adapters it uses, and is marked
`@builds(PortSet.<port>)` (ports/bundle.py), so mypy checks that what it returns is that port.
"""

from __future__ import annotations

from functools import cached_property, partial
from typing import TYPE_CHECKING

from agentkb.config import ConfigurationError, Settings
from agentkb.models.engine import AWS, EngineTraits
from agentkb.ports.bundle import PortSet, builds

if TYPE_CHECKING:
    from agentkb.adapters.aws.bedrock import BedrockEmbedder, BedrockEmbedders, BedrockReranker
    from agentkb.adapters.aws.dynamodb.archive import AwsWorkspaceArchive
    from agentkb.adapters.aws.dynamodb.catalog import DynamoDbCatalog
    from agentkb.adapters.aws.dynamodb.embedding_cache import DynamoDbEmbeddingCache
    from agentkb.adapters.aws.dynamodb.graph.store import DynamoDbGraphStore
    from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
    from agentkb.adapters.aws.dynamodb.security import DynamoDbKeyStore, DynamoDbRateLimiter
    from agentkb.adapters.aws.dynamodb.snapshot import DynamoDbSnapshotStore
    from agentkb.adapters.aws.dynamodb.tables import ClientFactory
    from agentkb.adapters.aws.dynamodb.traces import DynamoDbRecallTraceStore
    from agentkb.adapters.aws.opensearch.chunk_pages import OpenSearchChunkPages
    from agentkb.adapters.aws.opensearch.generations import OpenSearchShadowGenerations
    from agentkb.adapters.aws.opensearch.index import OpenSearchIndex
    from agentkb.adapters.aws.opensearch.indexed_memory import IndexedMemoryStore
    from agentkb.adapters.aws.opensearch.transport import JsonClient, LambdaDeadline
    from agentkb.adapters.aws.s3_objects import S3ObjectReader
    from agentkb.adapters.aws.secrets_manager import AwsSecretStore
    from agentkb.adapters.aws.sqs_indexing import SqsIndexingQueue
    from agentkb.adapters.aws.tokenizer import ApproximateTokenizer
    from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency
    from agentkb.composition import Ports


class AwsBuilder:
    """Builds each AWS adapter from the deployment's settings (table names, endpoint, models, region)."""

    engine: EngineTraits = AWS

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def _required(self, name: str) -> str:
        value = getattr(self.settings, name)
        if not value:
            raise ConfigurationError(f"AGENTKB_{name.upper()} is required with AGENTKB_BACKEND=aws")
        return str(value)

    def client(self, service: str, read_timeout_s: float = 10.0, max_attempts: int = 3) -> ClientFactory:
        """A factory of the process's cached boto3 client (created on the factory's first call)."""
        from agentkb.adapters.aws.dynamodb.tables import aws_client

        return partial(aws_client, service, self.settings.region, read_timeout_s, max_attempts)

    @cached_property
    def opensearch(self) -> JsonClient:
        """The collection's signed JSON client, shared by the document and memory indexes (no I/O until used)."""
        from agentkb.adapters.aws.opensearch.transport import JsonClient, SigV4Transport

        return JsonClient(SigV4Transport(self._required("opensearch_endpoint"), self._required("region")))

    @cached_property
    def dynamodb_catalog(self) -> DynamoDbCatalog:
        """The catalog table, also the index's KB lookup and document registry and the snapshots' version source."""
        from agentkb.adapters.aws.dynamodb.catalog import DynamoDbCatalog

        return DynamoDbCatalog(self.client("dynamodb"), self._required("catalog_table"))

    @builds(PortSet.catalog)
    def catalog(self, ports: Ports) -> DynamoDbCatalog:
        return self.dynamodb_catalog

    @builds(PortSet.index)
    def index(self, ports: Ports) -> OpenSearchIndex:
        from agentkb.adapters.aws.opensearch.index import OpenSearchIndex
        from agentkb.models.domain import EmbeddingProfile

        catalog = self.dynamodb_catalog
        profile = EmbeddingProfile(ports.embedder.model_id, ports.embedder.dimension)
        return OpenSearchIndex(self.opensearch, catalog, catalog, prefix=self.settings.opensearch_index_prefix,
                               generation=self.settings.opensearch_generation, default_profile=profile,
                               profiles=catalog)

    @builds(PortSet.embedder)
    def embedder(self, ports: Ports) -> BedrockEmbedder:
        from agentkb.adapters.aws.bedrock import TITAN_V2, BedrockEmbedder

        return BedrockEmbedder(self.bedrock_runtime, self.settings.embedding_model or TITAN_V2,
                               self.settings.embedding_dimension or 1024)

    @cached_property
    def bedrock_runtime(self) -> ClientFactory:
        """The embedders' client: the configured one and the registry's share it."""
        return self.client("bedrock-runtime", self.settings.embed_timeout_ms / 1000, max_attempts=2)

    @builds(PortSet.embedders)
    def embedders(self, ports: Ports) -> BedrockEmbedders:
        from agentkb.adapters.aws.bedrock import BedrockEmbedders

        return BedrockEmbedders(self.bedrock_runtime)

    @builds(PortSet.tokenizer)
    def tokenizer(self, ports: Ports) -> ApproximateTokenizer:
        from agentkb.adapters.aws.tokenizer import ApproximateTokenizer

        return ApproximateTokenizer()

    @builds(PortSet.reranker)
    def reranker(self, ports: Ports) -> BedrockReranker:
        from agentkb.adapters.aws.bedrock import BedrockReranker

        return BedrockReranker(self.client("bedrock-agent-runtime", 10.0, max_attempts=2), self.settings.region,
                               self.settings.rerank_model_arn)

    @builds(PortSet.keys)
    def keys(self, ports: Ports) -> DynamoDbKeyStore:
        from agentkb.adapters.aws.dynamodb.security import DynamoDbKeyStore

        return DynamoDbKeyStore(self.client("dynamodb"), self._required("keys_table"))

    @builds(PortSet.secrets)
    def secrets(self, ports: Ports) -> AwsSecretStore:
        from agentkb.adapters.aws.secrets_manager import AwsSecretStore

        return AwsSecretStore(self.settings.secret_arn, self.client("secretsmanager"))

    @builds(PortSet.rate_limiter)
    def rate_limiter(self, ports: Ports) -> DynamoDbRateLimiter:
        from agentkb.adapters.aws.dynamodb.security import DynamoDbRateLimiter

        return DynamoDbRateLimiter(self.client("dynamodb"), self._required("rate_limit_table"))

    @builds(PortSet.embedding_cache)
    def embedding_cache(self, ports: Ports) -> DynamoDbEmbeddingCache:
        from agentkb.adapters.aws.dynamodb.embedding_cache import DynamoDbEmbeddingCache

        return DynamoDbEmbeddingCache(self.client("dynamodb"), self._required("catalog_table"))

    @builds(PortSet.snapshots)
    def snapshots(self, ports: Ports) -> DynamoDbSnapshotStore:
        from agentkb.adapters.aws.dynamodb.snapshot import DynamoDbSnapshotStore

        return DynamoDbSnapshotStore(self.client("dynamodb"), self._required("snapshot_table"), self.client("s3"),
                                     self.settings.bucket, self.dynamodb_catalog)

    @builds(PortSet.memories)
    def memories(self, ports: Ports) -> DynamoDbMemoryStore | IndexedMemoryStore:
        """DynamoDB (the truth) plus, when a collection is configured, the OpenSearch memory legs past ~10k."""
        from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore

        truth = DynamoDbMemoryStore(self.client("dynamodb"), self._required("memory_table"))
        if not self.settings.opensearch_endpoint:
            return truth
        from agentkb.adapters.aws.opensearch.indexed_memory import IndexedMemoryStore
        from agentkb.adapters.aws.opensearch.memory import OpenSearchMemoryIndex

        return IndexedMemoryStore(truth, OpenSearchMemoryIndex(
            self.opensearch, prefix=self.settings.opensearch_index_prefix,
            generation=self.settings.opensearch_generation))

    @builds(PortSet.graph)
    def graph(self, ports: Ports) -> DynamoDbGraphStore:
        from agentkb.adapters.aws.dynamodb.graph.store import DynamoDbGraphStore

        return DynamoDbGraphStore(self.client("dynamodb"), self._required("graph_table"))

    @builds(PortSet.idempotency)
    def idempotency(self, ports: Ports) -> PowertoolsIdempotency:
        from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency, dynamodb_persistence

        return PowertoolsIdempotency(dynamodb_persistence(self.client("dynamodb"), self._required("idempotency_table")))

    @builds(PortSet.objects)
    def objects(self, ports: Ports) -> S3ObjectReader:
        from agentkb.adapters.aws.s3_objects import S3ObjectReader

        return S3ObjectReader(self.client("s3"))

    @builds(PortSet.deadline)
    def deadline(self, ports: Ports) -> LambdaDeadline:
        from agentkb.adapters.aws.opensearch.transport import LambdaDeadline

        return LambdaDeadline()

    @builds(PortSet.indexing_queue)
    def indexing_queue(self, ports: Ports) -> SqsIndexingQueue:
        from agentkb.adapters.aws.sqs_indexing import SqsIndexingQueue

        return SqsIndexingQueue(self.dynamodb_catalog, self.client("sqs"), self._required("ingest_queue_url"))

    @builds(PortSet.traces)
    def traces(self, ports: Ports) -> DynamoDbRecallTraceStore:
        """OB1 recall traces and usage events live in the memory table (no table of their own)."""
        from agentkb.adapters.aws.dynamodb.traces import DynamoDbRecallTraceStore

        return DynamoDbRecallTraceStore(self.client("dynamodb"), self._required("memory_table"))

    @builds(PortSet.archive)
    def archive(self, ports: Ports) -> AwsWorkspaceArchive:
        """Export / import (issue 25): memory and snapshot tables, chunks from the collection's indexes."""
        from agentkb.adapters.aws.dynamodb.archive import AwsWorkspaceArchive
        from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable
        from agentkb.adapters.aws.opensearch.archive_chunks import OpenSearchChunkReader

        dynamodb = self.client("dynamodb")
        chunks = OpenSearchChunkReader(self.opensearch, self.settings.opensearch_index_prefix)
        return AwsWorkspaceArchive(DynamoDbTable(dynamodb, self._required("memory_table"), store="memory"),
                                   DynamoDbTable(dynamodb, self._required("snapshot_table"), store="snapshot"),
                                   chunks, getattr(ports.memories, "sync", None))

    @builds(PortSet.generations)
    def generations(self, ports: Ports) -> OpenSearchShadowGenerations:
        """`kb reindex` to another profile: the pending target on the KB's item, chunks in the target's index."""
        from agentkb.adapters.aws.opensearch.generations import OpenSearchShadowGenerations
        from agentkb.adapters.aws.opensearch.index import OpenSearchIndex

        index = ports.index
        if not isinstance(index, OpenSearchIndex):
            raise TypeError("the shadow generation lives in the OpenSearch index")
        return OpenSearchShadowGenerations(index, self.dynamodb_catalog)

    @builds(PortSet.chunks)
    def chunks(self, ports: Ports) -> OpenSearchChunkPages:
        """A document's chunks from the collection (writes show after ~10-60 s)."""
        from agentkb.adapters.aws.opensearch.chunk_pages import OpenSearchChunkPages

        return OpenSearchChunkPages(self.opensearch, self.settings.opensearch_index_prefix)
