"""The composition root: one typed, frozen bundle of ports (`Ports`), built by one of two engine builders.

`build_ports(settings)` asks "embedded or aws?" once and hands the answer to `EmbeddedBuilder`
(adapters/embedded/builder.py) or `AwsBuilder` (adapters/aws/builder.py). Every port is built on first use (no
SQLite open, boto3 client or model load before then) and only its own adapter module is imported, so a function
imports only the adapters it uses.

How the rest of the code gets ports:
- A route declares what it needs with Powertools' `Depends`:
      def search_route(request: Annotated[KnowledgeSearchRequest, Body()],
                       ports: Annotated[Ports, Depends(get_ports)]) -> Response[Any]: ...
  (or a narrower provider that itself depends on `get_ports`, such as `search_routes.search_deps`).
- A test swaps a dependency through the function's resolvers (`FunctionApp.dependency_overrides`, shared by its
  REST and HTTP resolvers; the gate and the queue consumer resolve the bundle through it too):
      monkeypatch.setitem(search_app().dependency_overrides, get_ports, lambda: ports.replace(embedder=fake))
- Route modules do not use `from __future__ import annotations`: Powertools re-reads a route's type hints on every
  request to solve its dependencies, and string annotations would be re-evaluated each time (measured ~9x slower).
- The CLI, the demo and the local server call `get_ports()` (after the CLI has applied `--data-dir`) and pass
  the bundle on: every command acts on the configured engine.
"""

from __future__ import annotations

from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Protocol, TypedDict, Unpack

from agentkb.config import Settings, get_settings

if TYPE_CHECKING:
    from agentkb.models.engine import EngineTraits
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


class PortBuilder(Protocol):
    """What an engine provides: one method per port, called at most once per bundle, on first use.

    Each method gets the bundle, so a port built from others (the AWS index needs the catalog and the
    embedder's profile) takes them from the bundle and sees any replacement made with `Ports.replace`.
    """

    @property
    def engine(self) -> EngineTraits: ...

    def catalog(self, ports: Ports) -> Catalog: ...
    def index(self, ports: Ports) -> Index: ...
    def embedder(self, ports: Ports) -> Embedder: ...
    def tokenizer(self, ports: Ports) -> Tokenizer: ...
    def reranker(self, ports: Ports) -> Reranker: ...
    def keys(self, ports: Ports) -> KeyStore: ...
    def secrets(self, ports: Ports) -> SecretStore: ...
    def rate_limiter(self, ports: Ports) -> RateLimiter: ...
    def embedding_cache(self, ports: Ports) -> EmbeddingCache: ...
    def snapshots(self, ports: Ports) -> SnapshotStore: ...
    def memories(self, ports: Ports) -> MemoryStore: ...
    def graph(self, ports: Ports) -> GraphStore: ...
    def idempotency(self, ports: Ports) -> Idempotency: ...
    def objects(self, ports: Ports) -> ObjectReader: ...
    def deadline(self, ports: Ports) -> InvocationDeadline: ...
    def indexing_queue(self, ports: Ports) -> IndexingQueue: ...
    def traces(self, ports: Ports) -> RecallTraceStore: ...


class PortOverrides(TypedDict, total=False):
    """Ports to swap in `Ports.replace` (tests' fakes), each typed by its Protocol."""

    catalog: Catalog
    index: Index
    embedder: Embedder
    tokenizer: Tokenizer
    reranker: Reranker
    keys: KeyStore
    secrets: SecretStore
    rate_limiter: RateLimiter
    embedding_cache: EmbeddingCache
    snapshots: SnapshotStore
    memories: MemoryStore
    graph: GraphStore
    idempotency: Idempotency
    objects: ObjectReader
    deadline: InvocationDeadline
    indexing_queue: IndexingQueue
    traces: RecallTraceStore


class Ports:
    """Every port a route, the CLI or the demo may need, for one engine. Frozen: swap ports with `replace`."""

    def __init__(self, settings: Settings, builder: PortBuilder) -> None:
        object.__setattr__(self, "settings", settings)
        object.__setattr__(self, "builder", builder)

    settings: Settings
    builder: PortBuilder

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Ports is frozen: use replace({name}=...) or a dependency override")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Ports is frozen")

    def replace(self, settings: Settings | None = None, **ports: Unpack[PortOverrides]) -> Ports:
        """A bundle over the same engine with some ports (or the settings routes read) swapped; the ports already
        built are shared."""
        copy = Ports(settings or self.settings, self.builder)
        built = {name: value for name, value in vars(self).items() if name not in ("settings", "builder")}
        vars(copy).update({**built, **ports})  # cached_property's own storage: the swapped ports are "built"
        return copy

    @property
    def engine(self) -> EngineTraits:
        """The engine's name and labels (recall's `backend_invoked`, /health), from its builder."""
        return self.builder.engine

    @cached_property
    def catalog(self) -> Catalog:
        return self.builder.catalog(self)

    @cached_property
    def index(self) -> Index:
        return self.builder.index(self)

    @cached_property
    def embedder(self) -> Embedder:
        return self.builder.embedder(self)

    @cached_property
    def tokenizer(self) -> Tokenizer:
        return self.builder.tokenizer(self)

    @cached_property
    def reranker(self) -> Reranker:
        return self.builder.reranker(self)

    @cached_property
    def keys(self) -> KeyStore:
        return self.builder.keys(self)

    @cached_property
    def secrets(self) -> SecretStore:
        return self.builder.secrets(self)

    @cached_property
    def rate_limiter(self) -> RateLimiter:
        return self.builder.rate_limiter(self)

    @cached_property
    def embedding_cache(self) -> EmbeddingCache:
        return self.builder.embedding_cache(self)

    @cached_property
    def snapshots(self) -> SnapshotStore:
        return self.builder.snapshots(self)

    @cached_property
    def memories(self) -> MemoryStore:
        return self.builder.memories(self)

    @cached_property
    def graph(self) -> GraphStore:
        return self.builder.graph(self)

    @cached_property
    def idempotency(self) -> Idempotency:
        return self.builder.idempotency(self)

    @cached_property
    def objects(self) -> ObjectReader:
        return self.builder.objects(self)

    @cached_property
    def deadline(self) -> InvocationDeadline:
        return self.builder.deadline(self)

    @cached_property
    def indexing_queue(self) -> IndexingQueue:
        """Big documents accepted with 202 and indexed in the background (issue 16)."""
        return self.builder.indexing_queue(self)

    @cached_property
    def traces(self) -> RecallTraceStore:
        return self.builder.traces(self)


def build_ports(settings: Settings) -> Ports:
    """The bundle of the configured engine: the one place that tells the engines apart."""
    if settings.backend == "aws":
        from agentkb.adapters.aws.builder import AwsBuilder

        return Ports(settings, AwsBuilder(settings))
    from agentkb.adapters.embedded.builder import EmbeddedBuilder

    return Ports(settings, EmbeddedBuilder(settings))


@lru_cache(maxsize=1)
def get_ports() -> Ports:
    """The process's bundle for the current settings; the `Depends` target of every route."""
    return build_ports(get_settings())


def reset_ports() -> None:
    """Forget the bundle (after the settings changed: the CLI's --data-dir, tests)."""
    get_ports.cache_clear()
