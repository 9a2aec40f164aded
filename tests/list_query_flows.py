"""The list routes' query strings as /openapi.json documents them, one flow for both engines (the embedded suite in
tests/reliability/test_list_queries.py, the AWS one in tests/handlers/aws/test_aws_list_queries.py)."""

from __future__ import annotations

from typing import Any

from tests.helpers import body_of, http_event, invoke, rest_event
from tests.ob1_client import Ob1Client, writeback_payload
from tests.ob1_flows import RW, Mint


def call(key: str, method: str, path: str, query: dict[str, str], v2: bool = False) -> tuple[int, Any]:
    response = invoke("ingest", (http_event if v2 else rest_event)(method, path, key=key, query=query))
    return response["statusCode"], body_of(response)


def flow_list_query_strings(mint: Mint) -> None:
    key = mint(["lq"], RW, "lq-agent")
    written = Ob1Client(key).ok("POST", "/writeback", writeback_payload("lq", "q1"))["memories"]
    assert written
    for v2 in (False, True):
        # An empty OB1 filter is no filter (OB1's server: `if (project_id)`), in both event shapes
        plain = call(key, "GET", "/ob1/memories", {"workspace_id": "lq"}, v2)
        assert plain[0] == 200 and plain[1]["count"] == len(written)
        empty = {"workspace_id": "lq", "project_id": "", "review_status": "", "memory_type": "", "limit": ""}
        assert call(key, "GET", "/ob1/memories", empty, v2) == plain
        review = call(key, "GET", "/ob1/memories/review", {"workspace_id": "lq"}, v2)
        assert review[0] == 200 and call(key, "GET", "/ob1/memories/review", {"workspace_id": "lq",
                                                                              "project_id": ""}, v2) == review
    # The two OB1 lists require workspace_id (documented: required, minLength 1), as OB1's server does
    for path in ("/ob1/memories", "/ob1/memories/review"):
        for query in ({}, {"workspace_id": ""}):
            status, body = call(key, "GET", path, query)
            assert status == 400 and [d["path"] for d in body["error"]["details"]] == ["query.workspace_id"], body
    # Elsewhere an empty value is the documented 400, and a cursor the API did not issue is a 400 BAD_REQUEST
    status, body = call(key, "GET", "/v1/memories", {"workspace_id": "lq", "project_id": ""})
    assert status == 400 and body["error"]["details"][0]["path"] == "query.project_id"
    for cursor in ("bm90LWEtY3Vyc29y", "!!"):
        status, body = call(key, "GET", "/v1/memories", {"workspace_id": "lq", "cursor": cursor})
        assert status == 400 and body["error"]["code"] == "BAD_REQUEST", body
