"""Where each millisecond of a warm search through the handler goes (`bench.latency.search --stages`, and
`bench.latency.compare --stages`).

Nothing is patched. The search service times its own stages through its hook (`SearchDeps.stages`, a
`StageTimer`: this clock); the ports it and the gate call are wrapped in timing proxies; both reach the search
function through its resolvers' dependency overrides, the way the tests swap a dependency
(`search_app().dependency_overrides`: `get_ports` for the gate, `search_deps` for the route). What is neither a
service stage nor a port call (the gate's checks and HMAC, Powertools' routing, dependency solving and validation,
JSON, the decorators, the EMF flush) is the request's time outside the service. The lexical leg runs on a pool
thread, so its stages overlap the embedding. A counter costs about a microsecond: far below what it measures.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any

Request = dict[str, float]
REQUEST = "request (the handler, end to end)"
OUTSIDE = "outside the service: gate, resolver, validation, JSON, decorators, metrics"
# Port methods timed, by port: the gate's reads and writes, the legs' engine calls, hydration.
PORT_STAGES = {
    "keys": {"get_key": "gate: key lookup"},
    "secrets": {"key_pepper": "gate: pepper"},
    "rate_limiter": {"hit": "gate: rate-limit write"},
    "catalog": {"get_knowledge_base": "port: knowledge base read",
                "workspace_search_mode": "port: workspace search mode"},
    "index": {"vector_search": "leg: vector scan", "lexical_search": "leg: lexical chunk BM25 (pool thread)",
              "document_search": "leg: lexical document BM25 (pool thread)",
              "hydrate": "port: hydrate the final top-k", "similarities": "port: cosine of lexical-only hits"},
}


class StageClock:
    """Sums of wall time per stage label, for the request being timed (one request at a time); a `StageTimer`."""

    def __init__(self) -> None:
        self.current: Request = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    def stage(self, label: str) -> AbstractContextManager[object]:
        return self._timed(label)

    @contextmanager
    def _timed(self, label: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.add(label, (time.perf_counter() - t0) * 1000)

    def add(self, label: str, ms: float) -> None:
        with self._lock:  # the lexical leg adds from its pool thread
            self.current[label] = self.current.get(label, 0.0) + ms

    def run(self, call: Callable[[], Any]) -> Any:
        self.current = {}
        t0 = time.perf_counter()
        answer = call()
        self.current[REQUEST] = (time.perf_counter() - t0) * 1000
        service = sum(ms for label, ms in self.current.items() if label.startswith("service: "))
        if service:
            self.current[OUTSIDE] = self.current[REQUEST] - service
        self.requests.append(self.current)
        return answer

    def summary(self) -> dict[str, dict[str, float]]:
        """Median and mean ms per stage over the requests (a stage a request skipped counts as 0)."""
        labels = list(dict.fromkeys(label for request in self.requests for label in request))
        return {label: {"p50_ms": round(statistics.median(r.get(label, 0.0) for r in self.requests), 3),
                        "mean_ms": round(statistics.fmean(r.get(label, 0.0) for r in self.requests), 3)}
                for label in labels}


class TimedPort:
    """A port whose named methods add their wall time to the clock; every other attribute is the port's own."""

    def __init__(self, port: Any, clock: StageClock, methods: dict[str, str]) -> None:
        self._port, self._clock, self._methods = port, clock, methods

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._port, name)
        label = self._methods.get(name)
        if label is None:
            return found

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self._clock.stage(label):
                return found(*args, **kwargs)

        return timed


def instrument(clock: StageClock, ports: Any) -> None:
    """Serve the search function's requests with timed ports and the clock as the service's stage timer."""
    from agentkb.api.functions import search_app
    from agentkb.api.routes.search import search_deps
    from agentkb.composition import get_ports

    for port, methods in PORT_STAGES.items():
        for method in methods:
            getattr(getattr(ports, port), method)  # a renamed port method fails here, rather than vanish from the list
    timed = ports.replace(**{port: TimedPort(getattr(ports, port), clock, methods)
                             for port, methods in PORT_STAGES.items()})
    overrides = search_app().dependency_overrides
    overrides[get_ports] = lambda: timed
    # an override is called with the original provider's arguments (its `ports`): the timed bundle replaces them
    overrides[search_deps] = lambda ports=None: replace(search_deps(timed), stages=clock)
