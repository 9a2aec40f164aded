"""Graph-search responses against upstream Workspai `workspace-knowledge-search.v1` (../shared/contracts).

They fail upstream until the `graph` branch (issue 13 items 1-2: upstream relation and entity kinds, `derivation`,
`trust`, `confidence`, `freshness` on relations and proofs) lands, so the test is a STRICT xfail: the day those
responses pass, it XPASSes and fails the suite. Then delete the marker below and empty PENDING_UPSTREAM in
tests/upstream.py, so every graph-search replay is also held to upstream.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto import mock_aws

from tests.helpers import body_of
from tests.reliability.corpus import EVENTS, load, replay, seed
from tests.upstream import PENDING_UPSTREAM, upstream_errors

DOCUMENT = "workspace-knowledge-search.v1.schema.json"
CASES = sorted(p.relative_to(EVENTS).as_posix().removesuffix(".expected.json")
               for p in EVENTS.glob("*/*.expected.json") if json.loads(p.read_text()).get("schema") == DOCUMENT)


@pytest.fixture(autouse=True)
def aws() -> Any:
    with mock_aws():
        yield


def test_graph_search_events_exist_and_are_pending_upstream() -> None:
    assert len(CASES) >= 5 and DOCUMENT in PENDING_UPSTREAM


@pytest.mark.xfail(strict=True, reason="graph search fails upstream until the graph branch (issue 13 items 1-2) "
                                       "lands: then remove this marker and empty PENDING_UPSTREAM")
def test_every_recorded_graph_search_passes_upstream(container: Any) -> None:
    values = seed(container)
    failures = {}
    for case in CASES:
        response = replay(load(EVENTS / f"{case}.json", values))
        assert response["statusCode"] == 200, body_of(response)
        errors = upstream_errors(DOCUMENT, body_of(response))
        if errors:
            failures[case] = errors[:3]
    assert not failures, json.dumps(failures, indent=1)[:3000]
