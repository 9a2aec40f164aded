"""The four functions' APIs (the handlers and the local gateway use these), over the routes of api/routers.py."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial

from agentkb.api.app import FunctionApp
from agentkb.api.routers import FUNCTION_ROUTES


@cache
def function_app(name: str) -> FunctionApp:
    """The API of one function, built once per process over its own route modules only."""
    return FunctionApp(name, FUNCTION_ROUTES[name]())


APPS: dict[str, Callable[[], FunctionApp]] = {name: partial(function_app, name) for name in FUNCTION_ROUTES}
search_app, ingest_app, recall_app, snapshot_app = APPS["search"], APPS["ingest"], APPS["recall"], APPS["snapshot"]
