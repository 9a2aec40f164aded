"""The tests' face of the upstream contracts: contracts/upstream.py (the vendored documents and their validators)
plus the pairing of each schemas/ response file with the document it implements, and the session count.

Every validation is counted (VALIDATED); tests/conftest.py reports the session total (terminal summary and
COUNT_FILE).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker, ValidationError
from referencing import Registry

from contracts.upstream import (  # noqa: F401  (re-exported: the tests' one import of the upstream helper)
    CONTRACTS,
    KNOWLEDGE_SEARCH,
    PENDING_UPSTREAM,
    ROOT,
    UPSTREAM_OF,
    VALIDATED,
    WIDENED_BACKENDS,
    UpstreamContractsMissing,
    contracts_dir,
    json_documents,
    knowledge_search_schemas,
    registry,
    upstream_errors,
    validator_of,
)

COUNT_FILE = Path("/tmp/agentkb-upstream-validated.json")


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
            yield from validator_of(document, status).iter_errors(body)

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
