"""Issue 25: the archive port reads a workspace's recall traces with each trace's own usage events, on both engines
(AWS: one Query of the usage partition per trace, never the whole partition at once); a request id that begins
another's does not take its events, and forgetting a principal takes only theirs."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agentkb.models.recall.trace import RecallTrace
from agentkb.ports.archive import ArchivedTrace


def _trace(request_id: str, principal: str, usage: tuple[tuple[int, bool, float], ...]) -> ArchivedTrace:
    now = time.time()
    return ArchivedTrace(RecallTrace(request_id, "ws1", principal, now, {"query": "q"}, {}, ()),
                         tuple((m, used, now + at) for m, used, at in usage))


def test_each_trace_has_its_own_usage_and_forget_takes_only_the_principals(ports: Any) -> None:
    stored = [_trace("r1", "alice", ((1, True, 1.0), (2, False, 2.0))), _trace("r10", "bob", ((3, True, 3.0),)),
              _trace("r2", "alice", ())]
    assert ports.archive.put_traces(stored) == 3
    read = {t.trace.request_id: [(m, used) for m, used, _ in t.usage] for t in ports.archive.traces("ws1")}
    assert read == {"r1": [(1, True), (2, False)], "r10": [(3, True)], "r2": []}

    forgotten = ports.archive.forget_principal("ws1", "alice")
    assert (forgotten["traces"], forgotten["usage_events"]) == (2, 2)
    left = {t.trace.request_id: [(m, used) for m, used, _ in t.usage] for t in ports.archive.traces("ws1")}
    assert left == {"r10": [(3, True)]}


def test_on_aws_no_read_takes_the_whole_usage_partition(ports: Any, monkeypatch: Any) -> None:
    if ports.engine != "aws":
        pytest.skip("the embedded engine reads usage with the traces' own SQL pages")
    ports.archive.put_traces([_trace(f"r{i}", "alice", ((i, True, 1.0),)) for i in range(3)])
    table = ports.archive.memory
    conditions: list[tuple[str, str]] = []
    query = table.query

    def recorded(**kwargs: Any) -> Any:
        conditions.append((kwargs["KeyConditionExpression"], kwargs["ExpressionAttributeValues"][":pk"]["S"]))
        return query(**kwargs)

    monkeypatch.setattr(table, "query", recorded)
    assert len(list(ports.archive.traces("ws1"))) == 3
    ports.archive.forget_principal("ws1", "alice")
    usage = [c for c, pk in conditions if pk.startswith("MU#")]
    assert usage and all("begins_with(sk, :rq)" in c for c in usage)
