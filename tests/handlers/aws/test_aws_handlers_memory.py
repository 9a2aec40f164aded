"""Recall, memories and the knowledge graph through the real lambda_handlers with AGENTKB_BACKEND=aws.

Same environment as test_aws_handlers.py (moto, fake Bedrock clients, in-memory OpenSearch for the memory legs;
see its docstring for why). Recorded events are used where they fit: memories/write_ok, recall/recall_ok,
graph/write_ok and graph/search_agent (REST v1), with HTTP v2 events built by tests.helpers.http_event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from agentkb.models.graph.text import identity_fingerprint
from testkit.aws_backend import AwsBackend, throttle
from testkit.environment import REGION
from tests.helpers import body_of, http_event, invoke, response_headers, rest_event
from tests.reliability.corpus import EVENTS, load, schema_validator

RECALL_SCHEMA = schema_validator("recall-response.schema.json")
GRAPH_SCHEMA = schema_validator("workspace-knowledge-search.v1.schema.json")
ERROR_SCHEMA = schema_validator("error.schema.json")


@pytest.fixture()
def demo_key(aws_backend: AwsBackend) -> str:
    return aws_backend.key(["demo"], ["api:read", "api:write"], "recall-replay")


def recorded(case: str, key: str) -> dict[str, Any]:
    """A fresh copy of a recorded REST v1 event carrying `key`."""
    event: dict[str, Any] = load(EVENTS / f"{case}.json", {"akb_test_replay_key": key})
    return event


def assert_error(response: dict[str, Any], status: int, code: str) -> None:
    body = body_of(response)
    assert response["statusCode"] == status, body
    assert set(body) == {"error"} and body["error"]["code"] == code and not list(ERROR_SCHEMA.iter_errors(body))
    if status in (429, 503):
        assert int(response_headers(response)["retry-after"]) >= 1


@pytest.fixture()
def throttled_titan(aws_backend: AwsBackend) -> Iterator[Stubber]:
    """bedrock-runtime answering ThrottlingException (queue one error per expected call)."""
    client = boto3.client("bedrock-runtime", region_name=REGION)
    with Stubber(client) as stubber:
        aws_backend.clients["bedrock-runtime"] = client
        yield stubber
        stubber.assert_no_pending_responses()


def test_a_memory_is_recalled_right_after_its_201_and_the_idempotency_key_replays(demo_key: str,
                                                                                   aws_backend: AwsBackend) -> None:
    first = invoke("ingest", recorded("memories/write_ok", demo_key))
    again = invoke("ingest", recorded("memories/write_ok", demo_key))
    assert (first["statusCode"], again["statusCode"]) == (201, 200), body_of(first)
    assert body_of(again)["memory_id"] == body_of(first)["memory_id"]
    # The same idempotency key with another body is refused, and nothing new is stored
    changed = recorded("memories/write_ok", demo_key)
    changed["body"] = json.dumps({**json.loads(changed["body"]), "body": "Billing deploys on Fridays only."})
    assert_error(invoke("ingest", changed), 409, "CONFLICT")
    for event in (recorded("recall/recall_ok", demo_key),
                  http_event("POST", "/v1/recall", json.loads(recorded("recall/recall_ok", demo_key)["body"]),
                             key=demo_key)):
        response = invoke("recall", event)
        body = body_of(response)
        assert response["statusCode"] == 200, body
        assert not [e.message for e in RECALL_SCHEMA.iter_errors(body)]
        assert body["backend_invoked"] == "bedrock" and not body.get("vec_degraded")
        assert (body["results"][0]["name"], body["results"][0]["source"]) == ("billing-deploys", "direct")
        assert [m["memory_id"] for m in body["results"]].count(body_of(first)["memory_id"]) == 1
        assert "x-recall-degraded" not in response_headers(response)
    assert any(path.endswith("/_bulk") for _, path in aws_backend.opensearch.sent)  # the memory index was fed


def test_recall_whose_embedding_is_throttled_degrades_to_lexical(demo_key: str, aws_backend: AwsBackend,
                                                                 throttled_titan: Stubber) -> None:
    aws_backend.clients["bedrock-runtime"] = aws_backend.bedrock  # the write embeds normally
    assert invoke("ingest", recorded("memories/write_ok", demo_key))["statusCode"] == 201
    aws_backend.clients["bedrock-runtime"] = throttled_titan.client  # type: ignore[attr-defined]
    throttled_titan.add_client_error("invoke_model", service_error_code="ThrottlingException", http_status_code=429)
    # When the query embedding is throttled: 200, BM25 alone, the documented degraded fields and header
    response = invoke("recall", recorded("recall/recall_ok", demo_key))
    body = body_of(response)
    assert response["statusCode"] == 200, body
    assert not [e.message for e in RECALL_SCHEMA.iter_errors(body)]
    assert (body["vec_degraded"], body["vec_degraded_code"], body["backend_invoked"]) == (True, "slot_exhausted",
                                                                                         "none")
    assert body["vec_error"] and body["warning"].startswith("the query embedding failed")
    assert body["graph_matches"] == [] and body["results"][0]["source"] == "fts_fallback"
    assert body["results"][0]["name"] == "billing-deploys"
    assert response_headers(response)["x-recall-degraded"] == "slot_exhausted"
    # And with failOnDegraded=true the same throttling is a 503 with Retry-After (a retryable code)
    throttled_titan.add_client_error("invoke_model", service_error_code="ThrottlingException", http_status_code=429)
    strict = recorded("recall/recall_ok", demo_key)
    strict["queryStringParameters"] = {"failOnDegraded": "true"}
    strict["multiValueQueryStringParameters"] = {"failOnDegraded": ["true"]}
    failed = invoke("recall", strict)
    assert_error(failed, 503, "SERVICE_UNAVAILABLE")
    assert body_of(failed)["error"]["details"] == {"code": "slot_exhausted"}


def test_recall_and_memory_writes_outside_the_keys_workspaces_are_404(aws_backend: AwsBackend) -> None:
    other = aws_backend.key(["ws2"], ["api:read", "api:write"], "eve")
    assert_error(invoke("recall", recorded("recall/recall_ok", other)), 404, "NOT_FOUND")
    assert_error(invoke("ingest", recorded("memories/write_ok", other)), 404, "NOT_FOUND")
    assert_error(invoke("ingest", recorded("graph/write_ok", other)), 404, "NOT_FOUND")
    assert_error(invoke("search", recorded("graph/search_agent", other)), 404, "NOT_FOUND")


def test_a_graph_write_is_searchable_at_once(demo_key: str) -> None:
    written = invoke("ingest", recorded("graph/write_ok", demo_key))
    assert written["statusCode"] == 200, body_of(written)
    found = invoke("search", recorded("graph/search_agent", demo_key))
    body = body_of(found)
    assert found["statusCode"] == 200 and not list(GRAPH_SCHEMA.iter_errors(body))
    assert "ep:create-invoice" in {e["id"] for e in body["entities"]}
    # A second write over HTTP v2 (a new entity, related to a known one) is read back at once over HTTP v2
    ledger = {"workspaceId": "demo", "entities": [
        {"id": "svc:ledger", "kind": "service", "label": "ledger-writer", "projectId": "billing",
         "identity": {"key": "services/ledger", "scope": "project", "aliases": ["ledger"],
                      "fingerprint": identity_fingerprint("service", "billing", "services/ledger")}, "attributes": {},
         "proofIds": []}], "relations": [], "proofs": []}
    again = invoke("ingest", http_event("POST", "/v1/graph", ledger, key=demo_key))
    assert again["statusCode"] == 200, body_of(again)
    assert body_of(again)["data"]["graphSourceHash"] != body_of(written)["data"]["graphSourceHash"]
    search = invoke("search", http_event("POST", "/v1/graph/search", {"workspaceId": "demo", "query": "ledger"},
                                         key=demo_key))
    assert search["statusCode"] == 200, body_of(search)
    assert [e["id"] for e in body_of(search)["entities"]][:1] == ["svc:ledger"]
    assert body_of(search)["graphSourceHash"] == body_of(again)["data"]["graphSourceHash"]


def test_a_memory_naming_a_workspace_entity_attaches_to_it_and_adds_no_stub(demo_key: str) -> None:
    # Given the demo graph in DynamoDB, When a memory names billing-api (a repo) and Payments Team (an org)
    assert invoke("ingest", recorded("graph/write_ok", demo_key))["statusCode"] == 200
    written = invoke("ingest", recorded("memories/write_ok", demo_key))
    assert written["statusCode"] == 201, body_of(written)
    assert "svc:billing-api" in body_of(written)["entity_ids"]
    # Then graph search answers the real entity first and no memory stub anywhere (upstream-valid)
    found = invoke("search", http_event("POST", "/v1/graph/search", {"workspaceId": "demo", "query": "billing-api"},
                                        key=demo_key))
    body = body_of(found)
    assert found["statusCode"] == 200 and not list(GRAPH_SCHEMA.iter_errors(body))
    assert body["entities"][0]["id"] == "svc:billing-api"
    assert not [e for e in (*body["entities"], *body["relatedEntities"]) if e["id"].startswith("mem-")]
    # And recall, seeded by the name, reaches the memory
    recall = body_of(invoke("recall", recorded("recall/recall_ok", demo_key)))
    assert "billing-deploys" in [m["name"] for m in recall["results"]]


@pytest.mark.parametrize(("table", "function", "case"), [
    ("memory", "ingest", "memories/write_ok"), ("graph", "search", "graph/search_agent"),
    ("graph", "ingest", "graph/write_ok"), ("rate_limit", "recall", "recall/recall_ok"),
    ("keys", "recall", "recall/recall_ok")])
def test_a_throttled_table_is_503_with_retry_after(table: str, function: str, case: str, demo_key: str,
                                                   aws_backend: AwsBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    throttle(monkeypatch, aws_backend.env.tables[table])
    assert_error(invoke(function, recorded(case, demo_key)), 503, "SERVICE_UNAVAILABLE")


@pytest.mark.parametrize("fallback", [None, "fts_only"])
def test_recall_eligibility_holds_on_both_legs(fallback: str | None, aws_backend: AwsBackend) -> None:
    alice, bob = (aws_backend.key(["demo"], ["api:read", "api:write"], who) for who in ("alice", "bob"))
    memory = json.loads(recorded("memories/write_ok", alice)["body"])
    writes = [memory,  # revision 1, then superseded by revision 2
              {**memory, "body": "Billing deploys now go through GitHub Actions on weekdays.", "idempotency_key": "k2"},
              {**memory, "name": "alice-notes", "visibility": "personal", "idempotency_key": "k3",
               "body": "Billing deploy checklist that alice keeps for herself."},
              {**memory, "name": "acme-deploy", "idempotency_key": "k4", "body": "Billing deploy for customer ACME.",
               "sensitivity": {**memory["sensitivity"], "contains_customer_data": True}}]
    ids = [body_of(invoke("ingest", rest_event("POST", "/v1/memories", w, key=alice)))["memory_id"] for w in writes]
    assert ids == [1, 2, 3, 4]
    request = json.loads(recorded("recall/recall_ok", alice)["body"])
    request["scope"]["visibility"] = "personal"  # the audience: personal memories and everything broader
    seen = {}
    for who, key in (("alice", alice), ("bob", bob)):
        event = rest_event("POST", "/v1/recall", request, key=key, query={"fallback": fallback} if fallback else None)
        body = body_of(invoke("recall", event))
        assert body.get("vec_degraded_code") == ("fallback_fts_only" if fallback else None)
        seen[who] = sorted(r["memory_id"] for r in body["results"])
    # Superseded revisions, another principal's personal memory and customer data (not allowed) never show
    assert seen == {"alice": [2, 3], "bob": [2]}


def test_an_entity_larger_than_a_dynamodb_item_is_a_400_not_a_503(demo_key: str) -> None:
    # ~500 KB of attributes: stored twice in one item it could never fit DynamoDB's 400 KB, so no retry would help
    entity = {"id": "svc:big", "kind": "service", "label": "big", "attributes": {
        f"a{i}": ["y" * 400] * 10 for i in range(128)}, "proofIds": [],
        "identity": {"key": "services/big", "scope": "workspace", "aliases": [],
                     "fingerprint": identity_fingerprint("service", None, "services/big")}}
    response = invoke("ingest", http_event("POST", "/v1/graph", {"workspaceId": "demo", "entities": [entity],
                                                                 "relations": [], "proofs": []}, key=demo_key))
    assert_error(response, 400, "BAD_REQUEST")
    assert body_of(response)["error"]["details"]["issues"] == [{"path": "entities.0", "message": "larger than 128 KB"}]
