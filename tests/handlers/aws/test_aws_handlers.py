"""Every route through the real lambda_handlers with AGENTKB_BACKEND=aws: keys, rate limits, catalog, memories,
graph and snapshots on moto DynamoDB / Secrets Manager / S3, Titan and Cohere as deterministic fakes of the
Bedrock clients (moto's invoke_model answers `{}`), and the document + memory indexes on an in-memory OpenSearch.

Why an in-memory OpenSearch (fake_opensearch.py) rather than recorded exchanges: handler flows mint random ids
(knowledge bases, documents, `_id`s), and a snapshot fans out to the lexical, vector and similarity legs plus
the memory legs, so a recording would pin every request byte of flows whose ids change per run. The fake
evaluates the DSL the adapters send (an unknown clause fails loudly); the exact request shapes stay pinned by
the recorded contract suite (tests/contract/), which this module does not replace.

This module: the recorded event corpus (reads and refusals, REST v1 / HTTP v2 / direct), knowledge ingest and
search, snapshots (create, replay, GET bytes and hash, isolation, S3 bodies, throttling). Recall, memories and
the graph are in test_aws_handlers_memory.py.
"""

from __future__ import annotations

import json
from typing import Any

from agentkb.adapters.aws.dynamodb.snapshot import INLINE_LIMIT
from agentkb.api.routes_table import ROUTES
from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.services.snapshot.service import snapshot_hash
from testkit.aws_backend import AwsBackend, throttle
from tests.helpers import body_of, http_event, invoke, response_headers, rest_event
from tests.reliability.corpus import EVENTS, load, replay, route_of, schema_validator, seed
from tests.reliability.test_event_corpus import CASES, check_response

READS = {"health", "openapi", "searchKnowledge", "searchGraph", "recall", "getSnapshot", "listTags", "listMemories",
         "getMemory", "ob1Health", "ob1Recall", "ob1ListMemories", "ob1ListMemoriesByBody", "ob1ReviewQueue",
         "ob1ReviewQueueByBody", "ob1GetMemory", "ob1GetRecallTrace"}
SNAPSHOT_EVENTS = EVENTS / "snapshot"
RUN, ATTEMPT = "6f1c2b8e-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
DOCS = {"billing.md": "Failed payments are retried three times before the account is suspended. Invoices are "
                      "generated monthly.",
        "refunds.md": "Refunds go back to the original payment method within five business days."}


def _expected(case: str) -> dict[str, Any]:
    return json.loads((EVENTS / f"{case}.expected.json").read_text())  # type: ignore[no-any-return]


def test_recorded_reads_and_refusals_of_every_route_and_shape(aws_backend: AwsBackend) -> None:
    # Given one workspace seeded through the AWS adapters (every recorded event's ids, keys, graph, memory, snapshot)
    values = seed(get_ports(), snapshot=True, ws1_kb=True)
    cases = [c for c in CASES if _expected(c)["status"] >= 400
             or getattr(route_of(json.loads((EVENTS / f"{c}.json").read_text())), "operation_id", None) in READS]
    failures, operations = [], set()
    for case in cases:
        # When each recorded read, and each refusal of any route, is replayed through its real handler
        event = load(EVENTS / f"{case}.json", values)
        expected, response = _expected(case), replay(event)
        body = body_of(response)
        # Then it answers what it answers on the embedded engine: status, contract schema, OpenAPI, envelope
        try:
            assert response["statusCode"] == expected["status"], body
            check_response(event, response, body)
            if expected.get("schema"):
                assert not list(schema_validator(expected["schema"]).iter_errors(body)), body
            assert all(v not in json.dumps(body) for k, v in values.items() if k.startswith("akb_"))
        except AssertionError as exc:
            failures.append(f"{case}: {str(exc)[:300]}")
        route = route_of(event)
        operations.add(route.operation_id if route else "unknown")
    assert failures == []
    assert len(cases) >= 90 and operations == {r.operation_id for r in ROUTES} | {"unknown"}  # + unknown routes


def _knowledge_base(backend: AwsBackend, key: str) -> str:
    created = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "ws1", "name": "kb"},
                                          key=key))
    assert created["statusCode"] == 201, body_of(created)
    kb_id: str = body_of(created)["data"]["id"]
    for name, content in DOCS.items():
        path = f"/api/v2/knowledge/bases/{kb_id}/documents"
        added = invoke("ingest", rest_event("POST", path, {"workspaceId": "ws1", "name": name, "content": content},
                                            key=key, resource="/api/v2/knowledge/bases/{knowledgeBaseId}/documents"))
        assert added["statusCode"] == 201, body_of(added)
    return kb_id


def _snapshot_event(key: str, kb_id: str, case: str = "create_ok") -> dict[str, Any]:
    event: dict[str, Any] = load(SNAPSHOT_EVENTS / f"{case}.json", {"__KB_ID__": kb_id})
    event["headers"]["X-API-Key"], event["multiValueHeaders"]["X-API-Key"] = key, [key]
    return event


def _get(snapshot_id: str, key: str, *, v2: bool = False) -> dict[str, Any]:
    if v2:
        return invoke("snapshot", http_event("GET", f"/v1/snapshots/{snapshot_id}", key=key))
    return invoke("snapshot", rest_event("GET", f"/v1/snapshots/{snapshot_id}", key=key,
                                         resource="/v1/snapshots/{snapshotId}"))


def test_knowledge_written_through_ingest_is_searchable_at_once(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb_id = _knowledge_base(aws_backend, key)
    request = {"workspaceId": "ws1", "knowledgeBaseIds": [kb_id], "query": "refunds payment method", "topK": 3}
    for event in (rest_event("POST", "/api/v2/knowledge/search", request, key=key),
                  http_event("POST", "/api/v2/knowledge/search", {**request, "searchMode": "vector"}, key=key)):
        response = invoke("search", event)
        body = body_of(response)
        assert response["statusCode"] == 200, body
        assert not list(schema_validator("knowledge-search.v2.response.schema.json").iter_errors(body))
        assert body["data"]["results"][0]["documentName"] == "refunds.md"
    searched = {path.split("/")[1] for _, path in aws_backend.opensearch.sent if path.endswith("/_search")}
    # one chunk index per embedding profile, and its whole-document index for the document BM25 leg
    chunk_index = "agentkb-amazon.titan-embed-text-v2-0-256"
    assert searched == {chunk_index, f"{chunk_index}-documents"}


def test_snapshot_create_replay_and_get_return_identical_bytes_and_hash(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    reader, other = aws_backend.key(["ws1"], ["api:read"], "reader"), aws_backend.key(["ws2"], ["api:read"], "eve")
    kb_id = _knowledge_base(aws_backend, key)
    # When the recorded create is sent twice, then read back over REST v1 and HTTP v2
    first = invoke("snapshot", _snapshot_event(key, kb_id))
    again = invoke("snapshot", _snapshot_event(key, kb_id))
    assert (first["statusCode"], again["statusCode"]) == (201, 200), body_of(first)
    snapshot = body_of(first)
    assert not list(schema_validator("context-snapshot.schema.json").iter_errors(snapshot))
    assert snapshot["hash"] == snapshot_hash(snapshot)
    assert any(i["class"] == "documents" for i in snapshot["items"])  # the knowledge leg answered
    for got in (_get(snapshot["snapshotId"], reader), _get(snapshot["snapshotId"], reader, v2=True)):
        assert got["statusCode"] == 200 and got["body"] == first["body"] == again["body"]
    # Then the item lives inline in the snapshot table
    item = aws_backend.env.client("dynamodb").get_item(TableName=aws_backend.env.tables["snapshot"], Key={
        "pk": {"S": f"SNAP#{snapshot['snapshotId']}"}, "sk": {"S": "#SNAPSHOT"}})["Item"]
    assert bytes(item["body"]["B"]) == first["body"].encode() and "body_key" not in item
    # And another workspace's key, an unknown id and a malformed id are all the same 404 envelope
    missing = load(SNAPSHOT_EVENTS / "get_missing.json", {"akb_test_replay_key": key})
    for response in (_get(snapshot["snapshotId"], other), invoke("snapshot", missing), _get("not-a-uuid", key)):
        assert response["statusCode"] == 404
        assert body_of(response) == {"error": {"code": "NOT_FOUND", "message": "Snapshot not found"}}


def test_same_ids_with_another_body_is_409_and_other_workspace_create_is_404(aws_backend: AwsBackend) -> None:
    key, other = aws_backend.key(["ws1"], ["api:read", "api:write"]), aws_backend.key(["ws2"], ["api:write"], "eve")
    kb_id = _knowledge_base(aws_backend, key)
    assert invoke("snapshot", _snapshot_event(key, kb_id))["statusCode"] == 201
    changed = _snapshot_event(key, kb_id)
    changed["body"] = json.dumps({**json.loads(changed["body"]), "task": "Something else"})
    conflict = invoke("snapshot", changed)
    assert conflict["statusCode"] == 409 and body_of(conflict)["error"]["code"] == "CONFLICT"
    denied = invoke("snapshot", _snapshot_event(other, kb_id))
    assert denied["statusCode"] == 404 and body_of(denied)["error"]["code"] == "NOT_FOUND"


def test_a_snapshot_over_the_inline_limit_is_stored_in_s3_and_read_back(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    big = [{"class": "tool-result", "content": f"log {n}: " + " ".join(f"line-{n}-{i}" for i in range(11_000)),
            "trustTier": "tool-result", "classification": "internal", "sourceId": f"tool-{n}", "sourceRevision": "1"}
           for n in range(3)]  # ~145 KB each: together well over the 350 KB a DynamoDB item may hold
    request = {"runId": RUN, "attemptId": ATTEMPT, "scope": {"workspaceId": "ws1", "maxClassification": "internal"},
               "budget": {"maxTokens": 1_000_000, "reservedForOutput": 1000}, "task": "Summarise the logs",
               "items": big}
    created = invoke("snapshot", http_event("POST", "/v1/snapshots", request, key=key))
    assert created["statusCode"] == 201, body_of(created)
    raw = created["body"].encode()
    assert len(raw) > INLINE_LIMIT
    snapshot = body_of(created)
    assert snapshot["hash"] == snapshot_hash(snapshot) and [i["sourceId"] for i in snapshot["items"]][1:] == [
        "tool-0", "tool-1", "tool-2"]  # after the task
    item = aws_backend.env.client("dynamodb").get_item(TableName=aws_backend.env.tables["snapshot"], Key={
        "pk": {"S": f"SNAP#{snapshot['snapshotId']}"}, "sk": {"S": "#SNAPSHOT"}})["Item"]
    assert "body" not in item and item["body_key"]["S"].startswith(f"snapshots/ws1/{snapshot['snapshotId']}/")
    stored = aws_backend.env.client("s3").get_object(Bucket=aws_backend.env.bucket, Key=item["body_key"]["S"])
    assert stored["Body"].read() == raw
    got = _get(snapshot["snapshotId"], key)
    assert got["statusCode"] == 200 and got["body"].encode() == raw
    replayed = invoke("snapshot", http_event("POST", "/v1/snapshots", request, key=key))
    assert replayed["statusCode"] == 200 and replayed["body"].encode() == raw


def test_a_throttled_snapshot_table_is_503_with_retry_after(aws_backend: AwsBackend, monkeypatch: Any) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb_id = _knowledge_base(aws_backend, key)
    snapshot_id = body_of(invoke("snapshot", _snapshot_event(key, kb_id)))["snapshotId"]
    throttle(monkeypatch, aws_backend.env.tables["snapshot"])
    for response in (_get(snapshot_id, key), _get(snapshot_id, key, v2=True)):
        assert response["statusCode"] == 503, body_of(response)
        assert body_of(response)["error"]["code"] == "SERVICE_UNAVAILABLE"
        assert int(response_headers(response)["retry-after"]) >= 1


def test_a_snapshot_draws_on_knowledge_memory_and_graph(aws_backend: AwsBackend, monkeypatch: Any) -> None:
    key = aws_backend.key(["demo"], ["api:read", "api:write"])
    assert invoke("ingest", load(EVENTS / "memories/write_ok.json", {"akb_test_replay_key": key}))["statusCode"] == 201
    assert invoke("ingest", load(EVENTS / "graph/write_ok.json", {"akb_test_replay_key": key}))["statusCode"] == 200
    kb = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "demo", "name": "kb"},
                                     key=key))
    kb_id = body_of(kb)["data"]["id"]
    resource = "/api/v2/knowledge/bases/{knowledgeBaseId}/documents"
    doc = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb_id}/documents", {
        "workspaceId": "demo", "name": "deploy.md", "content": "Billing deploys run the CDK pipeline."}, key=key,
        resource=resource))
    request = {"runId": RUN, "attemptId": ATTEMPT, "budget": {"maxTokens": 4000, "reservedForOutput": 100},
               "scope": {"workspaceId": "demo", "maxClassification": "internal", "projectId": "billing"},
               "task": "how does billing deploy", "sources": {
                   "knowledge": {"knowledgeBaseIds": [kb_id]}, "memory": {"query": "billing deploy"},
                   "graph": {"query": "invoice"}}}
    created = invoke("snapshot", rest_event("POST", "/v1/snapshots", request, key=key))
    snapshot = body_of(created)
    assert created["statusCode"] == 201 and snapshot["hash"] == snapshot_hash(snapshot), snapshot
    assert {i["class"] for i in snapshot["items"]} == {"task", "documents", "memory", "graph"}
    assert snapshot["exclusions"] == []
    # A deleted document leaves the index at once: a search no longer finds it
    deleted = invoke("ingest", rest_event("DELETE", f"{resource.split('{')[0]}{kb_id}/documents/"
                                          f"{body_of(doc)['data']['id']}", key=key, query={"workspaceId": "demo"},
                                          resource=resource + "/{documentId}"))
    assert deleted["statusCode"] == 204
    search = invoke("search", rest_event("POST", "/api/v2/knowledge/search", {
        "workspaceId": "demo", "knowledgeBaseIds": [kb_id], "query": "billing deploys"}, key=key))
    assert search["statusCode"] == 200 and body_of(search)["data"]["results"] == []
    # A build whose idempotency claim is throttled is a 503 with Retry-After, never a 500
    throttle(monkeypatch, aws_backend.env.tables["idempotency"])
    busy = invoke("snapshot", rest_event("POST", "/v1/snapshots", {**request, "attemptId": RUN}, key=key))
    assert busy["statusCode"] == 503 and body_of(busy)["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert int(response_headers(busy)["retry-after"]) >= 1


def test_the_dynamodb_rate_limiter_answers_429_past_the_limit(aws_backend: AwsBackend, monkeypatch: Any,
                                                               one_rate_window: float) -> None:
    monkeypatch.setenv("AGENTKB_RATE_LIMIT_PER_MINUTE", "1")
    reset_settings()
    reset_ports()
    key = aws_backend.key(["ws1"], ["api:read"])
    unknown = "9b2e7c1a-0000-4000-8000-000000000000"
    assert _get(unknown, key)["statusCode"] == 404  # the key's one request of this minute
    refused = _get(unknown, key, v2=True)
    assert refused["statusCode"] == 429 and body_of(refused)["error"]["code"] == "RATE_LIMITED"
    headers = response_headers(refused)
    assert headers["retry-after"] == "30" and headers["x-ratelimit-reset"] == "2027-01-15T08:01:00Z"
    assert (headers["x-ratelimit-limit"], headers["x-ratelimit-remaining"]) == ("1", "0")
