"""The one helper that validates a response against an upstream contract in ../shared/contracts.

Real clients of the systems whose contracts we serve validate with exactly those files, so every `$ref` is resolved
through the upstream documents themselves: a `referencing` registry keyed by the `$id` of each JSON document there.
The knowledge search contract is a Markdown API reference; its per-status response schemas are read from it.

Only the deviations contracts/README.md ("What the documents leave open") prescribes are applied, nothing else:
- recall-response: `backend_invoked` is widened from upstream's `openrouter | none` to our `bedrock | local | none`;
- context-snapshot: `execution-scope.schema.json` is not in ../shared; the README defines the scope, and our
  schemas/execution-scope.schema.json (that definition) is registered at the `$id` the contract's `$ref` names.

CI clones the repository with ../shared beside it (as /work/shared is for /work/main; a linked git worktree
resolves it from the checkout it belongs to); a missing contracts folder is an error, never a skip. Every
validation is counted (VALIDATED); tests/conftest.py reports the session total (terminal summary and COUNT_FILE).
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from referencing import Registry, Resource

ROOT = Path(__file__).resolve().parents[1]


def _checkout_root(root: Path) -> Path:
    """The main checkout: `root` itself, or for a linked git worktree the checkout that owns its .git."""
    marker = root / ".git"
    if not marker.is_file():
        return root
    gitdir = Path(marker.read_text().removeprefix("gitdir:").strip())
    common = gitdir / "commondir"
    return (gitdir / common.read_text().strip()).resolve().parent if common.is_file() else root


CONTRACTS = _checkout_root(ROOT).parent / "shared" / "contracts"
KNOWLEDGE_SEARCH = "knowledge-search.v2.api.md"
COUNT_FILE = Path("/tmp/agentkb-upstream-validated.json")
WIDENED_BACKENDS = ["bedrock", "local", "none"]  # contracts/README.md: our embedding backends
VALIDATED: Counter[str] = Counter()  # upstream document -> responses validated against it in this process

# Our published schemas/ response file -> (upstream document, status) it implements. Every error status of the
# knowledge search reference declares the same envelope, the one every route answers with (tested).
UPSTREAM_OF: dict[str, tuple[str, int | None]] = {
    "recall-response.schema.json": ("recall-response.schema.json", None),
    "context-snapshot.schema.json": ("context-snapshot.schema.json", None),
    "workspace-knowledge-search.v1.schema.json": ("workspace-knowledge-search.v1.schema.json", None),
    "knowledge-search.v2.response.schema.json": (KNOWLEDGE_SEARCH, 200),
    "error.schema.json": (KNOWLEDGE_SEARCH, 400),
}
# Documents whose responses cannot pass upstream yet (replays keep them on schemas/ meanwhile). Graph search left
# this set when the graph model became the upstream model (issue 13 items 1-2).
PENDING_UPSTREAM: frozenset[str] = frozenset()


class UpstreamContractsMissing(RuntimeError):
    """../shared/contracts is not beside the repository."""


def contracts_dir() -> Path:
    if not (CONTRACTS / "README.md").is_file():
        raise UpstreamContractsMissing(
            f"upstream contracts not found at {CONTRACTS}: the tests need ../shared/contracts beside the repository")
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
def _validator(document: str, status: int | None) -> Draft202012Validator:
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
    errors = sorted(_validator(document, status).iter_errors(body), key=lambda e: list(e.absolute_path))
    VALIDATED[document] += 1
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message[:200]}" for e in errors][:5]


def assert_upstream(document: str, body: Any, status: int | None = None) -> None:
    errors = upstream_errors(document, body, status)
    assert not errors, f"fails upstream {document}: {errors}"


class OursAndUpstream:
    """One validator for a schemas/ response file: our published copy first, then the upstream document it
    implements (counted). Drop-in for the Draft202012Validator the tests used (iter_errors, validate, is_valid)."""

    def __init__(self, schema_file: str, ours: Draft202012Validator) -> None:
        self.schema_file, self.ours = schema_file, ours
        pending = schema_file in PENDING_UPSTREAM
        self.upstream = None if pending else UPSTREAM_OF.get(schema_file)

    def iter_errors(self, body: Any) -> Iterator[ValidationError]:
        yield from self.ours.iter_errors(body)
        if self.upstream is not None:
            document, status = self.upstream
            VALIDATED[document] += 1
            yield from _validator(document, status).iter_errors(body)

    def validate(self, body: Any) -> None:
        for error in self.iter_errors(body):
            raise error

    def is_valid(self, body: Any) -> bool:
        return not list(self.iter_errors(body))


def ours_and_upstream(schema_file: str, registry_of_ours: Registry | None = None) -> OursAndUpstream:
    """The validator of a schemas/ response file (its own $refs resolved through `registry_of_ours`)."""
    schema = json.loads((ROOT / "schemas" / schema_file).read_text())
    ours = Draft202012Validator(schema, registry=registry_of_ours or Registry(), format_checker=FormatChecker())
    return OursAndUpstream(schema_file, ours)


# ---- the session count (hooks re-exported by tests/conftest.py) ------------------------------------------------

@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: add a finished worker's counts."""
    VALIDATED.update(getattr(node, "workeroutput", {}).get("upstream_validated", {}))


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker hands its counts to the controller
        workeroutput["upstream_validated"] = dict(VALIDATED)
        return
    COUNT_FILE.write_text(json.dumps({"total": sum(VALIDATED.values()),
                                      "by_document": dict(sorted(VALIDATED.items()))}, indent=2) + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if hasattr(terminalreporter.config, "workeroutput"):
        return
    by_document = ", ".join(f"{doc} {n}" for doc, n in sorted(VALIDATED.items())) or "none"
    terminalreporter.write_line(f"upstream contracts: {sum(VALIDATED.values())} responses validated "
                                f"({by_document}); written to {COUNT_FILE}")
