"""Validate a response against an upstream contract vendored in this folder (needs jsonschema, not pytest).

The one reader of these documents, shared by the tests (tests/upstream.py adds the schemas/ pairing and the pytest
session count) and the benchmarks (bench/fuzz/upstream_check.py validates the fuzz run's recorded responses).

Real clients of the systems whose contracts we serve validate with exactly these files, so every `$ref` is resolved
through the upstream documents themselves: a `referencing` registry keyed by the `$id` of each JSON document here.
The knowledge search contract is a Markdown API reference; its per-status response schemas are read from it.

Only the deviations README.md ("What the documents leave open") prescribes are applied, nothing else:
- recall-response: `backend_invoked` is widened from upstream's `openrouter | none` to our `bedrock | local | none`;
- context-snapshot: `execution-scope.schema.json` is not published with it; the README defines the scope, and our
  schemas/execution-scope.schema.json (that definition) is registered at the `$id` the contract's `$ref` names.
Every validation is counted in VALIDATED (document -> responses validated in this process).
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

CONTRACTS = Path(__file__).resolve().parent
ROOT = CONTRACTS.parent
KNOWLEDGE_SEARCH = "knowledge-search.v2.api.md"
WIDENED_BACKENDS = ["bedrock", "local", "none"]  # README.md: our embedding backends
VALIDATED: Counter[str] = Counter()

# Our published schemas/ response file -> (upstream document, status) it implements. Every error status of the
# knowledge search reference declares the same envelope, the one every route answers with (tested).
UPSTREAM_OF: dict[str, tuple[str, int | None]] = {
    "recall-response.schema.json": ("recall-response.schema.json", None),
    "context-snapshot.schema.json": ("context-snapshot.schema.json", None),
    "workspace-knowledge-search.v1.schema.json": ("workspace-knowledge-search.v1.schema.json", None),
    "knowledge-search.v2.response.schema.json": (KNOWLEDGE_SEARCH, 200),
    "error.schema.json": (KNOWLEDGE_SEARCH, 400),
}
# schemas/ files whose responses are not yet held to upstream (each with a strict xfail that says why): none since
# the graph model became upstream's (issue 13 items 1-2).
PENDING_UPSTREAM: frozenset[str] = frozenset()


class UpstreamContractsMissing(RuntimeError):
    """A vendored contract document is missing or unreadable."""


def contracts_dir() -> Path:
    if not (CONTRACTS / "README.md").is_file():
        raise UpstreamContractsMissing(f"the vendored upstream contracts are missing from {CONTRACTS}")
    return CONTRACTS


def _widen_recall(document: dict[str, Any]) -> dict[str, Any]:
    widened = copy.deepcopy(document)
    backend = widened["properties"]["backend_invoked"]
    assert set(backend["enum"]) == {"openrouter", "none"}, "upstream changed backend_invoked: revisit the widening"
    backend["enum"] = WIDENED_BACKENDS
    return widened


@cache
def json_documents() -> dict[str, dict[str, Any]]:
    """File name -> upstream JSON document, as served (the README's deviations applied)."""
    docs = {p.name: json.loads(p.read_text()) for p in sorted(contracts_dir().glob("*.json"))}
    docs["recall-response.schema.json"] = _widen_recall(docs["recall-response.schema.json"])
    return docs


@cache
def knowledge_search_schemas() -> dict[int, dict[str, Any]]:
    """HTTP status -> the response body schema the Markdown API reference declares for it."""
    text = (contracts_dir() / KNOWLEDGE_SEARCH).read_text()
    blocks = re.findall(r"^### (\d{3})\n+```json\n(.*?)\n```", text, re.S | re.M)
    schemas = {int(status): json.loads(raw)["content"]["application/json"]["schema"] for status, raw in blocks}
    if 200 not in schemas or 400 not in schemas:
        raise UpstreamContractsMissing(f"{KNOWLEDGE_SEARCH}: no 200 / 400 response schema found")
    return schemas


@cache
def registry() -> Registry:
    """Every upstream JSON document under its $id, plus the README-defined execution scope."""
    resources = [(doc["$id"], Resource.from_contents(doc)) for doc in json_documents().values()]
    scope = json.loads((ROOT / "schemas" / "execution-scope.schema.json").read_text())
    resources.append((scope["$id"], Resource.from_contents(scope)))
    return Registry().with_resources(resources)


@cache
def validator_of(document: str, status: int | None) -> Draft202012Validator:
    """The validator of an upstream document (`status` picks a knowledge search response schema)."""
    if document == KNOWLEDGE_SEARCH:
        schemas = knowledge_search_schemas()
        # An error status the reference does not list (422, 405) answers the same envelope as the ones it does.
        schema = schemas[200] if status in (None, 200) else schemas.get(status, schemas[400])
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    else:
        schema = json_documents()[document]
    return Draft202012Validator(schema, registry=registry(), format_checker=FormatChecker())


def upstream_errors(document: str, body: Any, status: int | None = None) -> list[str]:
    """Why `body` fails the upstream `document` ([] when it passes); `status` picks a knowledge search schema."""
    errors = sorted(validator_of(document, status).iter_errors(body), key=lambda e: list(e.absolute_path))
    VALIDATED[document] += 1
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:200]}" for e in errors][:5]
