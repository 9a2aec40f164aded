"""Where each millisecond of a warm hybrid search through the handler goes: perf counters around every stage.

    python bench/latency.py --dataset bench/data/scifact --stages [--metrics]

Wraps the stages of the request path in place (module functions and the bound ports' methods) with
`time.perf_counter` and sums them per request, on whichever thread runs them; the lexical leg runs on a pool
thread, so its stages overlap the embedding. Counters cost about a microsecond each: far below what they measure.
"""

from __future__ import annotations

import functools
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

Request = dict[str, float]


class StageClock:
    """Sums of wall time per stage label, for the request being timed (one request at a time)."""

    def __init__(self) -> None:
        self.current: Request = {}
        self.requests: list[Request] = []
        self._lock = threading.Lock()

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = (time.perf_counter() - t0) * 1000
                with self._lock:
                    self.current[label] = self.current.get(label, 0.0) + elapsed

        setattr(owner, name, timed)

    def run(self, call: Callable[[], Any]) -> Any:
        self.current = {}
        t0 = time.perf_counter()
        answer = call()
        self.current["request (the handler, end to end)"] = (time.perf_counter() - t0) * 1000
        self.requests.append(self.current)
        return answer

    def summary(self) -> dict[str, dict[str, float]]:
        """Median and mean ms per stage over the requests (a stage a request skipped counts as 0)."""
        labels = list(dict.fromkeys(label for request in self.requests for label in request))
        return {label: {"p50_ms": round(statistics.median(r.get(label, 0.0) for r in self.requests), 3),
                        "mean_ms": round(statistics.fmean(r.get(label, 0.0) for r in self.requests), 3)}
                for label in labels}


def instrument(clock: StageClock, ports: Any) -> None:
    """Put the clock around each stage of the search path (call before the first request)."""
    from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

    import agentkb.api.app as app
    import agentkb.api.gate as gate
    import agentkb.api.routes.search as routes
    import agentkb.services.search.service as search
    from agentkb.api.observability import metrics

    stages = [
        (app, "check_request", "gate: auth, rate limit, body checks"), (gate, "authenticate", "gate: authenticate"),
        (ports.rate_limiter, "hit", "gate: rate-limit write"),
        (ApiGatewayResolver, "resolve", "resolver: routing + validation + route"),
        (routes, "search_knowledge", "service: search_knowledge"),
        (search, "load_knowledge_bases", "service: read the knowledge bases"),
        (ports.catalog, "workspace_search_mode", "service: workspace search mode"),
        (search, "_retrieve", "service: retrieve (legs + fusion)"),
        (search, "_embed", "leg: query embedding"), (ports.index, "vector_search", "leg: vector scan"),
        (search._LEGS, "submit", "leg: hand the lexical leg to its thread"),
        (search, "lexical_ranking", "leg: lexical (pool thread)"),
        (ports.index, "lexical_search", "leg: lexical chunk BM25"),
        (ports.index, "document_search", "leg: lexical document BM25"),
        (search, "fuse_lexical", "fusion: lexical (chunk + document)"),
        (search, "fuse_reciprocal_rank", "fusion: hybrid RRF"), (search, "fair_share", "fusion: fair share"),
        (search, "_hydrate", "hydration (final top-k)"), (search, "_finish", "service: results + models"),
        (routes, "json_model_response", "response: serialise JSON"),
        (metrics.provider, "flush_metrics", "metrics: EMF flush"),
    ]
    for owner, name, label in stages:
        clock.wrap(owner, name, label)  # a renamed stage fails here, rather than vanishing from the breakdown
