"""The composition root: one typed, frozen bundle of ports (`Ports`), built by one of two engine builders.

`build_ports(settings)` asks "embedded or aws?" once and hands the answer to `EmbeddedBuilder`
(adapters/embedded/builder.py) or `AwsBuilder` (adapters/aws/builder.py). The ports themselves are declared once,
in `PortSet` (ports/bundle.py), which `Ports` inherits. Every port is built on first use (no SQLite open, boto3
client or model load before then) and only its own adapter module is imported, so a function imports only the
adapters it uses.

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

from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from agentkb.config import Settings, get_settings
from agentkb.ports.bundle import PortSet, declared_ports, takes_ports

if TYPE_CHECKING:
    from agentkb.models.engine import EngineTraits


class PortBuilder(Protocol):
    """What an engine provides: its traits, and per port of `PortSet` one method marked `@builds(PortSet.<port>)`.

    The bundle calls that method with itself, at most once, on the port's first use; so a port built from others
    (the AWS index needs the catalog and the embedder's profile) takes them from the bundle and sees any
    replacement made with `Ports.replace`.
    """

    @property
    def engine(self) -> EngineTraits: ...


class Ports(PortSet):
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

    @takes_ports(PortSet)
    def replace(self, **ports: object) -> Ports:
        """A bundle over the same engine with some ports swapped (each typed by its Protocol in `PortSet`); the
        ports already built are shared."""
        unknown = sorted(set(ports) - {port.name for port in declared_ports()})
        if unknown:  # mypy refuses these too; tests' `override_ports` passes untyped keywords
            raise TypeError(f"no such port: {', '.join(unknown)}")
        return self._copy(self.settings, ports)

    def with_settings(self, settings: Settings) -> Ports:
        """A bundle over the same engine and the same ports whose routes read other settings."""
        return self._copy(settings, {})

    def _copy(self, settings: Settings, swapped: dict[str, object]) -> Ports:
        copy = Ports(settings, self.builder)
        built = {name: value for name, value in vars(self).items() if name not in ("settings", "builder")}
        vars(copy).update({**built, **swapped})  # where a Port keeps what it built: the swapped ports are "built"
        return copy

    @property
    def engine(self) -> EngineTraits:
        """The engine's name and labels (recall's `backend_invoked`, /health), from its builder."""
        return self.builder.engine


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
