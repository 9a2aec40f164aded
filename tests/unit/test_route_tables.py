"""One route table: the gate's (api/routes_table.py) is what the routers serve, what /openapi.json documents and
what API Gateway deploys (infra/constants.py derives its table from it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentkb.api.routers import FUNCTION_ROUTERS, function_openapi, openapi_document
from agentkb.api.routes_table import ROUTES
from infra import constants as c

ROOT = Path(__file__).resolve().parents[2]


def _served(document: dict) -> set[tuple[str, str, str]]:
    return {(method.upper(), path, op["operationId"]) for path, item in document["paths"].items()
            for method, op in item.items()}


def test_each_function_serves_exactly_its_routes() -> None:
    for function in FUNCTION_ROUTERS:
        expected = {(r.method, r.path, r.operation_id) for r in ROUTES if r.function == function}
        assert _served(function_openapi(function)) == expected, function


def test_the_openapi_document_lists_every_route_once_with_the_key_scheme() -> None:
    document = openapi_document()
    assert _served(document) == {(r.method, r.path, r.operation_id) for r in ROUTES}
    assert document["components"]["securitySchemes"]["apiKey"]["name"] == "X-API-Key"


def test_api_gateway_deploys_the_api_route_table() -> None:
    assert set(c.ROUTES) == {(r.method, r.path, r.function, r.scope is not None) for r in ROUTES}
    assert len(c.ROUTES) == len(ROUTES)


def test_the_document_is_built_without_the_function_apps() -> None:
    # In a fresh interpreter: assembling the document imports no function app (and so builds none).
    probe = ("import json, sys\nfrom agentkb.api.routers import openapi_document\n"
             "paths = len(openapi_document()['paths'])\n"
             "print(json.dumps({'paths': paths, 'apps': 'agentkb.api.functions' in sys.modules}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.splitlines()[-1]) == {"paths": len({r.path for r in ROUTES}), "apps": False}


def _named_routes(text: str, prefix: str = "") -> set[tuple[str, str]]:
    """Every route a document names, as `METHOD /path` or as the contracts' table rows `METHOD `/path``."""
    import re

    inline = re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`?\s]*)", text)
    tabled = re.findall(r"\b(GET|POST|PUT|PATCH|DELETE) `(/[^`?\s]*)`", text)
    return {(method, prefix + path) for method, path in inline + tabled}


def _documented_routes() -> set[str]:
    """operationIds of every route the public interface names: ../shared/API.md, the OB1 contract it adopts under
    `/ob1`, and docs/interface.md, our additions to API.md (which is read-only outside this repository)."""
    import re

    from agentkb.api.routes_table import match_route
    from tests.upstream import contracts_dir

    api = (contracts_dir().parent / "API.md").read_text(encoding="utf-8")
    assert "under the prefix `/ob1`" in api
    named = (_named_routes(api)
             | _named_routes((contracts_dir() / "ob1-agent-memory.md").read_text(encoding="utf-8"), "/ob1")
             | _named_routes((ROOT / "docs" / "interface.md").read_text(encoding="utf-8")))
    found: set[str] = set()
    for method, path in named:
        route = match_route(method, re.sub(r"\{\w+\}", "x", path))
        assert route is not None, f"the interface names {method} {path}, which no function serves"
        found.add(route[0].operation_id)
    return found


def test_the_public_interface_document_names_every_route_we_serve() -> None:
    assert {r.operation_id for r in ROUTES} - _documented_routes() == set()
