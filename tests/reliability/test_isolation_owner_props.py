"""Ownership properties (hypothesis) over principals x visibilities x every memory route, on both engines (the
`ports` fixture: embedded through the handlers, AWS on moto + the fake OpenSearch). Three principals share one
workspace; each holds a personal memory `held` (the same name), ann also `only-ann`, ann wrote a shared memory
through an OB1 write-back, and each made a personal OB1 recall (its trace). For any actor, victim, visibility,
name and `owner_id`, on every route and write surface (HTTP, direct invocation, MCP `write_memory`):
- what any other principal sees of its own personal memories and of its trace never changes;
- no answer carries another principal's personal memory or recall query;
- `owner_id` naming another principal is refused (403 `OWNER_MISMATCH`) and stores nothing;
- an accepted write's `supersedes` / `revision` come from the actor's own namespace only;
- another principal's memory id or trace id answers exactly what a missing one answers.
The red team's cases, one by one: test_isolation_owner.py."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentkb.api.routes_table import ROUTES
from tests.contract.port_engines import EnginePorts
from tests.helpers import mint, rest_event
from tests.ob1_client import Ob1Client, writeback_payload
from tests.reliability.corpus import replay
from tests.reliability.owner_ops import (
    OPS,
    PRINCIPALS,
    VISIBILITIES,
    Action,
    World,
    asked,
    ob1_recall,
    secret,
    view,
)
from tests.reliability.test_isolation_owner import RW

SETTINGS = settings(max_examples=20, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture()
def world(ports: EnginePorts) -> World:
    keys = {p: mint(ports, ["w"], RW, p) for p in PRINCIPALS}
    notes = [(p, "held") for p in PRINCIPALS] + [("ann", "only-ann")]
    for p, name in notes:
        written = replay(rest_event("POST", "/v1/memories", {"workspace_id": "w", "visibility": "personal",
                                                             "type": "note", "name": name,
                                                             "body": f"{secret(p)} held note"}, key=keys[p]))
        assert written["statusCode"] == 201
    shared = Ob1Client(keys["ann"]).ok("POST", "/writeback", writeback_payload(
        "w", "shared", project=None, visibility={"workspace": "shared"}))["memories"][0]["memory_id"]
    traces = {p: Ob1Client(keys[p]).ok("POST", "/recall", ob1_recall(p))["request_id"] for p in PRINCIPALS}
    return World(keys, traces, str(shared))


REVIEWS = [("restrict_scope", None), ("restrict_scope", "personal"), ("confirm", None), ("edit", None),
           ("mark_stale", None)]
ACTIONS = st.builds(Action, actor=st.sampled_from(PRINCIPALS), victim=st.sampled_from(PRINCIPALS),
                    visibility=st.sampled_from(VISIBILITIES), name=st.sampled_from(("held", "only-ann", "fresh")),
                    owner=st.sampled_from(("omitted", "actor", "victim")), review=st.sampled_from(REVIEWS),
                    on_shared=st.booleans())


def test_every_memory_route_is_under_test() -> None:
    # /ob1/health names no workspace and returns no data; snapshots recall with the workspace audience (no
    # personal memories; test_isolation_routes.py covers them)
    memory = {r.operation_id for r in ROUTES if r.path.startswith(("/v1/memories", "/v1/recall", "/ob1/"))}
    assert {operation for operation, _ in OPS} == memory - {"ob1Health"}


# The red team's move on every route, always run (hypothesis' own draws come on top): bob, naming ann as owner, at
# ann's personal name, her personal memory, her trace, and restricting her shared memory to personal.
ATTACK = Action(actor="bob", victim="ann", visibility="personal", name="held", owner="victim",
                review=("restrict_scope", None), on_shared=True)


def with_attacks(test: Any) -> Any:
    for op in OPS:
        test = example(op=op, a=ATTACK)(test)
        test = example(op=op, a=replace(ATTACK, on_shared=False, review=("edit", None)))(test)
    return test


@SETTINGS
@with_attacks
@given(op=st.sampled_from(sorted(OPS)), a=ACTIONS)
def test_no_route_touches_or_reveals_another_principals_own(world: World, op: tuple[str, str], a: Action) -> None:
    before = {p: view(world, p) for p in PRINCIPALS}
    status, answer = OPS[op](world, a, before)
    assert status < 500, (op, answer)
    text = json.dumps(answer)
    for other in (p for p in PRINCIPALS if p != a.actor):
        assert secret(other) not in text and asked(other) not in text, (op, other)
        assert view(world, other) == before[other], (op, other)  # nothing of theirs changed
