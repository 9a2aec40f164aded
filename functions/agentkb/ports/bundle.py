"""Every port a bundle holds, declared once: `PortSet` names each port and types it by its Protocol.

The rest derives from that one line per port: `composition.Ports` inherits the typed, lazy attributes,
`Ports.replace(**ports)` takes exactly these names with these types (mypy reads them off `PortSet`'s constructor),
and each engine's builder marks its method for a port with `@builds(PortSet.<port>)`, so mypy checks that what
the method returns is that port. A new port is its Protocol, one line here and one builder method per engine.
"""

from __future__ import annotations

from collections.abc import Callable
from threading import RLock
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, cast, dataclass_transform, overload

if TYPE_CHECKING:
    from agentkb.ports.access import KeyStore, RateLimiter, SecretStore
    from agentkb.ports.archive import WorkspaceArchive
    from agentkb.ports.catalog import Catalog
    from agentkb.ports.chunks import ChunkReader
    from agentkb.ports.embedding import Embedder, EmbedderRegistry, EmbeddingCache, Reranker, Tokenizer
    from agentkb.ports.graph import GraphStore
    from agentkb.ports.index import Index, IndexingQueue, ShadowGenerations
    from agentkb.ports.invocation import Idempotency, InvocationDeadline, ObjectReader
    from agentkb.ports.memory import MemoryStore, RecallTraceStore
    from agentkb.ports.snapshot import SnapshotStore

T = TypeVar("T")
Builder = TypeVar("Builder")
Bundle = TypeVar("Bundle")
Swaps = ParamSpec("Swaps")


class Port(Generic[T]):
    """One port of a bundle: built by the bundle's builder on first use, at most once per bundle, then kept.

    Works as `functools.cached_property` does on Python 3.11 (the value lives in the bundle's `__dict__`, one
    lock per port serialises first uses), but also declares `__set__`, which is how a dataclass-like constructor
    (and so `Ports.replace`) learns the port's type; setting refuses, the bundle is frozen.
    """

    def __init__(self) -> None:
        self.name = ""
        self._lock = RLock()

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, bundle: None, owner: type) -> Port[T]: ...
    @overload
    def __get__(self, bundle: object, owner: type) -> T: ...

    def __get__(self, bundle: Any, owner: type) -> T | Port[T]:
        if bundle is None:
            return self
        built = vars(bundle)
        if self.name not in built:
            with self._lock:
                if self.name not in built:
                    built[self.name] = getattr(bundle.builder, self.name)(bundle)
        return cast(T, built[self.name])

    def __set__(self, bundle: object, value: T) -> None:
        raise AttributeError(f"Ports is frozen: use replace({self.name}=...) or a dependency override")


@dataclass_transform(kw_only_default=True, frozen_default=True)
def _declaration(cls: type[T]) -> type[T]:
    """Marks the class whose `Port` fields are the ports: mypy then types a keyword constructor from them (each
    argument optional, typed by its Protocol), which `takes_ports` lends to `Ports.replace`. Nothing at run time."""
    return cls


@_declaration
class PortSet:
    """The ports of a bundle, each typed by its Protocol (ports/<concern>.py)."""

    catalog: Port[Catalog] = Port()
    index: Port[Index] = Port()
    embedder: Port[Embedder] = Port()
    tokenizer: Port[Tokenizer] = Port()
    reranker: Port[Reranker] = Port()
    keys: Port[KeyStore] = Port()
    secrets: Port[SecretStore] = Port()
    rate_limiter: Port[RateLimiter] = Port()
    embedding_cache: Port[EmbeddingCache] = Port()
    snapshots: Port[SnapshotStore] = Port()
    memories: Port[MemoryStore] = Port()
    graph: Port[GraphStore] = Port()
    idempotency: Port[Idempotency] = Port()
    objects: Port[ObjectReader] = Port()
    deadline: Port[InvocationDeadline] = Port()
    indexing_queue: Port[IndexingQueue] = Port()  # big documents accepted with 202, indexed in the background
    traces: Port[RecallTraceStore] = Port()
    archive: Port[WorkspaceArchive] = Port()  # export / import: a workspace's records by id (issue 25)
    embedders: Port[EmbedderRegistry] = Port()  # embedders of other profiles than the configured one (issue 25)
    generations: Port[ShadowGenerations] = Port()  # `kb reindex` to another profile: the shadow generation
    chunks: Port[ChunkReader] = Port()  # a document's chunks, paged (the console's document view, issue 28)


def declared_ports() -> list[Port[Any]]:
    """Every port of `PortSet`, in declaration order."""
    return [value for value in vars(PortSet).values() if isinstance(value, Port)]


def builds(port: Port[T]) -> Callable[[Callable[[Builder, Bundle], T]], Callable[[Builder, Bundle], T]]:
    """Marks an engine builder's method as the one that builds `port` (named like it); mypy checks it returns one."""

    def check(method: Callable[[Builder, Bundle], T]) -> Callable[[Builder, Bundle], T]:
        if method.__name__ != port.name:
            raise TypeError(f"the builder of port {port.name!r} must be named {port.name!r}, not {method.__name__!r}")
        return method

    return check


def takes_ports(declared: Callable[Swaps, object]) -> Callable[
        [Callable[..., Bundle]], Callable[Concatenate[Bundle, Swaps], Bundle]]:
    """Types a method's keyword arguments as `declared`'s constructor's: the ports, each by its Protocol."""

    def typed(method: Callable[..., Bundle]) -> Callable[Concatenate[Bundle, Swaps], Bundle]:
        return method

    return typed
