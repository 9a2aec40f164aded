"""The four functions' APIs: which routers each serves (the handlers and the local gateway use these)."""

from __future__ import annotations

from functools import cache

from agentkb.api.app import FunctionApp


@cache
def search_app() -> FunctionApp:
    from agentkb.api import search_routes

    return FunctionApp("search", [search_routes.router, *_optional("agentkb.api.graph_routes", "search_router")])


@cache
def ingest_app() -> FunctionApp:
    from agentkb.api import ingest_routes

    return FunctionApp("ingest", [ingest_routes.router, *_optional("agentkb.api.memory_routes", "router"),
                                  *_optional("agentkb.api.graph_routes", "ingest_router")])


@cache
def recall_app() -> FunctionApp:
    return FunctionApp("recall", _optional("agentkb.api.recall_routes", "router"))


@cache
def snapshot_app() -> FunctionApp:
    return FunctionApp("snapshot", _optional("agentkb.api.snapshot_routes", "router"))


APPS = {"search": search_app, "ingest": ingest_app, "recall": recall_app, "snapshot": snapshot_app}


def _optional(module: str, attribute: str) -> list:  # type: ignore[type-arg]
    """Routers of features that may not be installed in this build (each feature lands on its own)."""
    import importlib

    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return []
    return [getattr(found, attribute)]
