"""The four functions' APIs (the handlers and the local gateway use these), over the routers of api/routers.py."""

from __future__ import annotations

from functools import cache

from agentkb.api.app import FunctionApp
from agentkb.api.routers import FUNCTION_ROUTERS


@cache
def search_app() -> FunctionApp:
    return FunctionApp("search", FUNCTION_ROUTERS["search"]())


@cache
def ingest_app() -> FunctionApp:
    return FunctionApp("ingest", FUNCTION_ROUTERS["ingest"]())


@cache
def recall_app() -> FunctionApp:
    return FunctionApp("recall", FUNCTION_ROUTERS["recall"]())


@cache
def snapshot_app() -> FunctionApp:
    return FunctionApp("snapshot", FUNCTION_ROUTERS["snapshot"]())


APPS = {"search": search_app, "ingest": ingest_app, "recall": recall_app, "snapshot": snapshot_app}
