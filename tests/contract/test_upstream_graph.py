"""Graph-search responses against upstream Workspai `workspace-knowledge-search.v1` (contracts/): every
recorded graph search, replayed on the seeded demo graph. (Every graph-search replay elsewhere is held to upstream
too, through tests/upstream.py; this test names the cases so a regression points here.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto import mock_aws

from agentkb.composition import Ports
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


def test_graph_search_events_exist_and_are_held_to_upstream() -> None:
    assert len(CASES) >= 5 and DOCUMENT not in PENDING_UPSTREAM


def test_every_recorded_graph_search_passes_upstream(bundle: Ports) -> None:
    values = seed(bundle)
    failures = {}
    for case in CASES:
        response = replay(load(EVENTS / f"{case}.json", values))
        assert response["statusCode"] == 200, body_of(response)
        errors = upstream_errors(DOCUMENT, body_of(response))
        if errors:
            failures[case] = errors[:3]
    assert not failures, json.dumps(failures, indent=1)[:3000]
