"""Shared pieces of the reliability suite: the seeded workspace, replaying events (testkit/corpus.py), schema
validators."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from agentkb.api.routes_table import RouteSpec
from testkit.corpus import (
    DEMO_GRAPH,
    EVENTS,
    KB,
    PLACEHOLDER_SCOPES,
    WORKSPACES,
    WS,
    function_of,
    load,
    replay,
    route_of,
    seed,
)
from tests.helpers import ROOT
from tests.upstream import OursAndUpstream, ours_and_upstream

# The seeded workspace and replaying the events live in testkit/corpus.py (bench/coldstart/record.py seeds it too).
__all__ = ["DEMO_GRAPH", "EVENTS", "KB", "PLACEHOLDER_SCOPES", "WORKSPACES", "WS", "function_of", "load",
           "openapi_response_errors", "replay", "route_of", "schema_validator", "seed"]


@cache
def _registry() -> Registry:
    resources = []
    for path in sorted((ROOT / "schemas").glob("*.json")):
        schema = json.loads(path.read_text())
        resources.append((schema.get("$id", path.name), Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def schema_validator(name: str) -> OursAndUpstream:
    """Our schemas/ file (its $refs through schemas/) and the upstream document it implements."""
    return ours_and_upstream(name, _registry())


@cache
def _openapi() -> dict[str, Any]:
    from agentkb.api.routers import openapi_document

    return openapi_document()


def openapi_response_errors(route: RouteSpec, status: int, body: Any) -> list[str]:
    """Why `body` does not match what /openapi.json declares for this route and status ([] when it does)."""
    operation = _openapi()["paths"][route.path][route.method.lower()]
    declared = operation["responses"].get(str(status))
    if declared is None:
        return [f"status {status} is not declared for {route.operation_id}"]
    schema = (declared.get("content") or {}).get("application/json", {}).get("schema")
    if schema is None:
        return [] if body in (None, "") else [f"{route.operation_id} {status} declares no body"]
    registry = Registry().with_resource("urn:agentkb:openapi", Resource.from_contents(
        {**_openapi(), "$schema": "https://json-schema.org/draft/2020-12/schema"}))
    validator = Draft202012Validator({"$ref": "urn:agentkb:openapi#" + _pointer(route, status)}, registry=registry)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(body)][:5]


def _pointer(route: RouteSpec, status: int) -> str:
    path = route.path.replace("~", "~0").replace("/", "~1")
    return f"/paths/{path}/{route.method.lower()}/responses/{status}/content/application~1json/schema"
