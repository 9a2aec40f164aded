"""One route table: the gate's (api/routes_table.py) is what the routers serve, what /openapi.json documents and
what API Gateway deploys (infra/constants.py derives its table from it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from agentkb.api.routers import FUNCTION_ROUTES, function_openapi, openapi_document
from agentkb.api.routes_table import ROUTES, match_route
from agentkb.console.static import console_response
from contracts.upstream import CONTRACTS
from infra import constants as c

ROOT = Path(__file__).resolve().parents[2]


def _served(document: dict) -> set[tuple[str, str, str]]:
    return {(method.upper(), path, op["operationId"]) for path, item in document["paths"].items()
            for method, op in item.items()}


def test_each_function_serves_exactly_its_routes() -> None:
    for function in FUNCTION_ROUTES:
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
    inline = re.findall(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`?\s]*)", text)
    tabled = re.findall(r"\b(GET|POST|PUT|PATCH|DELETE) `(/[^`?\s]*)`", text)
    return {(method, prefix + path) for method, path in inline + tabled}


def _interface_sections() -> tuple[str, str]:
    """docs/interface.md split into (what is served, what is planned): a section whose heading says "planned"
    names the agreed interface that is not built yet."""
    text = (ROOT / "docs" / "interface.md").read_text(encoding="utf-8")
    sections = re.split(r"^(?=#{2,3} )", text, flags=re.M)
    planned = [s for s in sections if "planned" in s.splitlines()[0].lower()]
    return "".join(s for s in sections if s not in planned), "".join(planned)


def _served_route(method: str, path: str) -> str | None:
    """The operationId serving a named route; "console" for the web console's files, which the search function
    answers outside the route table (agentkb/console/static.py: no operation, not in /openapi.json)."""
    concrete = re.sub(r"\{\w+\}", "x", path)
    route = match_route(method, concrete)
    if route:
        return route[0].operation_id
    answer = console_response(method, concrete)
    return "console" if answer is not None and answer["statusCode"] < 400 else None


def _documented_routes() -> set[str]:
    """operationIds of every route the public interface names: docs/interface.md and the OB1 contract it adopts
    under `/ob1` (vendored in contracts/)."""
    served, _ = _interface_sections()
    assert "under the prefix `/ob1`" in served
    named = _named_routes(served) | _named_routes((CONTRACTS / "ob1-agent-memory.md").read_text(encoding="utf-8"),
                                                  "/ob1")
    found: set[str] = set()
    for method, path in named:
        operation = _served_route(method, path)
        assert operation is not None, f"the interface names {method} {path}, which no function serves"
        found.add(operation)
    return found


def test_the_public_interface_document_names_every_route_we_serve() -> None:
    assert {r.operation_id for r in ROUTES} - _documented_routes() == set()


def test_no_route_the_interface_plans_is_served_yet() -> None:
    # A planned route that ships moves out of its "planned" section, so the document never undersells the API.
    _, planned = _interface_sections()
    named = _named_routes(planned)
    mentioned = set(re.findall(r"`(?:GET|POST|PUT|PATCH|DELETE) /[^`\s?]*", planned))
    assert len(named) >= len(mentioned), f"docs/interface.md plans {sorted(mentioned)}: the parse missed some"
    assert {f"{m} {p}" for m, p in named if _served_route(m, p)} == set()
