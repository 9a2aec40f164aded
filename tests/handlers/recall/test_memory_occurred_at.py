"""`occurred_at`: a memory may say when what it records happened, beside when it was written (`created_at`).

Through the handlers: written with `POST /v1/memories` (normalised to RFC 3339 UTC), shown by `GET /v1/memories/{id}`,
refused in the error envelope when it is not a date, part of the request hash (a new time is a new revision),
and OB1's `source_refs[0].timestamp` maps onto it (and back onto `source.timestamp`).
"""

from __future__ import annotations

from typing import Any

from agentkb.local.lambda_context import LocalLambdaContext
from tests.handlers.recall.recall_helpers import WS, call, handler, write
from tests.helpers import body_of, rest_event
from tests.ob1_client import writeback_payload


def get_memory(key: str, memory_id: int) -> dict[str, Any]:
    response = handler("ingest")(rest_event("GET", f"/v1/memories/{memory_id}", None, key=key,
                                            query={"workspace_id": WS}), LocalLambdaContext())
    assert response["statusCode"] == 200, response["body"]
    out: dict[str, Any] = body_of(response)["data"]
    return out


def test_occurred_at_is_stored_normalised_and_shown(rw_key: str, fake_embedder: Any) -> None:
    written = write(rw_key, "support-group", "Caroline went to the support group", occurred_at="2023-05-07")
    item = get_memory(rw_key, written["memory_id"])
    assert item["occurred_at"] == "2023-05-07T00:00:00.000Z" and item["created_at"] != item["occurred_at"]
    plain = get_memory(rw_key, write(rw_key, "no-time", "nothing dated")["memory_id"])
    assert plain["occurred_at"] is None


def test_a_new_time_is_a_new_revision_and_the_same_is_unchanged(rw_key: str, fake_embedder: Any) -> None:
    first = write(rw_key, "event", "the launch", occurred_at="2023-05-07T10:00:00Z")
    assert write(rw_key, "event", "the launch", expect=200, occurred_at="2023-05-07T10:00:00Z")["revision"] == 1
    assert write(rw_key, "event", "the launch", occurred_at="2023-05-08T10:00:00Z")["supersedes"] == first[
        "memory_id"]


def test_a_bad_time_is_refused_and_nothing_is_stored(rw_key: str, fake_embedder: Any) -> None:
    status, out, _ = call("ingest", "/v1/memories", {"workspace_id": WS, "visibility": "workspace", "type": "note",
                                                     "name": "bad-time", "body": "x", "occurred_at": "last May"},
                          rw_key)
    assert status == 400 and out["error"]["code"] == "BAD_REQUEST", out
    assert [d["path"] for d in out["error"]["details"]] == ["occurred_at"]
    assert write(rw_key, "bad-time", "x")["revision"] == 1  # the refused write left nothing behind


def test_ob1_source_timestamp_is_occurred_at(rw_key: str, fake_embedder: Any) -> None:
    payload = writeback_payload(WS, "t1", project=None, source_refs=[
        {"kind": "chat", "uri": "chat://1", "title": "standup", "timestamp": "2023-05-07T09:30:00+02:00"}])
    status, out, _ = call("ingest", "/ob1/writeback", payload, rw_key)
    assert status == 200, out
    memory = out["memories"][0]
    assert memory["source"]["timestamp"] == "2023-05-07T07:30:00.000Z"
    assert get_memory(rw_key, int(memory["memory_id"]))["occurred_at"] == "2023-05-07T07:30:00.000Z"
    undated = writeback_payload(WS, "t2", project=None)  # no timestamp: the source time is when it was written
    memory = call("ingest", "/ob1/writeback", undated, rw_key)[1]["memories"][0]
    assert memory["source"]["timestamp"] == memory["freshness"]["created_at"]
