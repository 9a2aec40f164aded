"""The grants match the calls: every AWS call a function makes is allowed by that function's synthesized role policy
(and, for OpenSearch, the collection's data-access policy), and every grant is used by some call or carries its
reason in infra/grant_reasons.py.

Self-contained on purpose: `make test` runs pytest-xdist with `--dist loadfile`, so a recorder spread over the
whole AWS suite would see one worker's share of the calls. This module drives every route family of every
function through the real handlers in one process (the recorded event corpus, both ingest paths of the queue,
S3 snapshot bodies) under moto + the in-memory OpenSearch of testkit, records the calls by function
(aws_calls.py) and evaluates them against the template of the one synthesis tests/infra shares (conftest.py).
"""

from __future__ import annotations

import json
import os
import uuid
from collections import defaultdict
from typing import Any

import botocore.client
import pytest
from aws_calls import Recorder
from botocore.exceptions import ClientError
from iam_policy import FunctionGrants, Grant
from iam_requests import Deployment

from agentkb.adapters.aws.dynamodb.memory import staging
from agentkb.composition import get_ports
from agentkb.services.ingest.service import SYNC_INDEX_MAX_CHARS
from infra import constants as c
from infra.grant_reasons import UNEXERCISED_GRANTS
from testkit.aws_backend import AwsBackend
from testkit.environment import REGION
from tests.helpers import body_of, invoke, rest_event
from tests.ob1_client import Ob1Client
from tests.ob1_flows_limits import largest_payload
from tests.reliability.corpus import EVENTS, KB, load, replay, seed
from tests.reliability.make_events import GRAPH_WRITE, MEMORY, WS
from tests.reliability.test_event_corpus import CASES


def _rest_successes(*, deletes: bool) -> list[str]:
    """The recorded REST v1 success cases (the other shapes reach the same calls), the deletes or the others."""
    cases = []
    for case in CASES:
        event = json.loads((EVENTS / f"{case}.json").read_text())
        expected = json.loads((EVENTS / f"{case}.expected.json").read_text())
        if expected["status"] < 400 and "operation" not in event and event.get("version") != "2.0" \
                and (event.get("httpMethod") == "DELETE") == deletes:
            cases.append(case)
    return cases


def _drive(backend: AwsBackend) -> None:
    """Every route family of every function, through its handler."""
    values = seed(get_ports(), snapshot=True, ws1_kb=True)
    _replay(_rest_successes(deletes=False), values)
    key, kb = values["akb_test_replay_key"], values["__KB_ID__"]
    reranked = invoke("search", rest_event("POST", "/api/v2/knowledge/search", {
        "workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "failed payments", "rerankerEnabled": True,
        "rerankerModel": "rerank-v3.5"}, key=key))
    assert body_of(reranked)["data"]["rerankerStatus"] == "applied", body_of(reranked)
    _queue_paths(backend, key, kb)
    _snapshots(key)
    _staged_writeback(key)
    _forget_a_principal()
    _replay(_rest_successes(deletes=True), values)  # last: the cases before them still find their data


def _replay(cases: list[str], values: dict[str, str]) -> None:
    for case in cases:
        response = replay(load(EVENTS / f"{case}.json", values))
        assert response["statusCode"] < 400, (case, body_of(response))


def _queue_paths(backend: AwsBackend, key: str, kb: str) -> None:
    """A document too big to index within its request (202, queued), and an upload announced by S3: both
    indexed by the queue consumer."""
    big = {"workspaceId": "ws1", "name": "big.md", "content": "Refunds are settled weekly. " * 1300}
    assert len(big["content"]) > SYNC_INDEX_MAX_CHARS
    accepted = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents", big, key=key))
    assert accepted["statusCode"] == 202, body_of(accepted)
    queued = backend.env.client("sqs").receive_message(QueueUrl=backend.env.queue_url, MaxNumberOfMessages=10)
    upload = f"uploads/ws1/{kb}/notes.md"
    backend.env.client("s3").put_object(Bucket=backend.env.bucket, Key=upload, Body=b"Page the on-call engineer.")
    notice = json.dumps({"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put", "awsRegion": REGION,
                                      "s3": {"bucket": {"name": backend.env.bucket}, "object": {"key": upload}}}]})
    bodies = [m["Body"] for m in queued.get("Messages", [])]
    unknown = json.dumps({"knowledgeBaseId": "kb-missing", "workspaceId": "ws1", "name": "a.md", "content": "x"})
    batch = invoke("ingest", {"Records": [
        {"messageId": f"m{n}", "receiptHandle": f"h{n}", "body": body, "eventSource": "aws:sqs",
         "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {}}
        for n, body in enumerate([*bodies, notice, unknown])]})
    # the unknown knowledge base fails its record: its idempotency claim is released for the retry
    assert bodies and batch == {"batchItemFailures": [{"itemIdentifier": f"m{len(bodies) + 1}"}]}, batch


def _snapshots(key: str) -> None:
    """A snapshot over the inline limit (its body in S3, read back), then, after a memory write moved the graph's
    version, a graph search and a snapshot drawing on knowledge, memory and graph (both refill the hash cache)."""
    items = [{"class": "tool-result", "content": " ".join(f"line-{n}-{i}" for i in range(11_000)),
              "trustTier": "tool-result", "classification": "internal", "sourceId": f"tool-{n}", "sourceRevision": "1"}
             for n in range(3)]
    request = {"runId": str(uuid.uuid4()), "attemptId": str(uuid.uuid4()), "task": "Summarise the logs",
               "scope": {"workspaceId": WS, "maxClassification": "internal"},
               "budget": {"maxTokens": 1_000_000, "reservedForOutput": 1000}, "items": items}
    created = invoke("snapshot", rest_event("POST", "/v1/snapshots", request, key=key))
    assert created["statusCode"] == 201, body_of(created)
    got = invoke("snapshot", rest_event("GET", f"/v1/snapshots/{body_of(created)['snapshotId']}", key=key,
                                        resource="/v1/snapshots/{snapshotId}"))
    assert got["statusCode"] == 200, body_of(got)
    drawing = {**request, "attemptId": str(uuid.uuid4()), "items": [],
               "budget": {"maxTokens": 4000, "reservedForOutput": 100},
               "sources": {"knowledge": {"knowledgeBaseIds": [KB]}, "memory": {"query": "billing deploy"},
                           "graph": {"query": "billing"}}}
    _moves_the_graph_version(key, "vpn-cutover")
    drawn = invoke("snapshot", rest_event("POST", "/v1/snapshots", drawing, key=key))
    assert drawn["statusCode"] == 201, body_of(drawn)
    _moves_the_graph_version(key, "vpn-rollback")
    found = replay(rest_event("POST", "/v1/graph/search", {"workspaceId": WS, "query": "vpn"}, key=key))
    assert found["statusCode"] == 200, body_of(found)
    with pytest.MonkeyPatch.context() as patch:  # a build that fails storing its body releases its claim
        patch.setattr(botocore.client.BaseClient, "_make_api_call", _refusing("PutObject"))
        busy = invoke("snapshot", rest_event("POST", "/v1/snapshots", {**request, "attemptId": str(uuid.uuid4())},
                                             key=key))
    assert busy["statusCode"] >= 500, body_of(busy)


def _moves_the_graph_version(key: str, name: str) -> None:
    """The graph entity is relabelled (its old name and term items are deleted; the graph write refills the hash
    cache), then a memory with a relation writes its edge into the graph: the version moves, the cache is stale."""
    (entity,) = GRAPH_WRITE["entities"]
    relabelled = {**GRAPH_WRITE, "entities": [{**entity, "label": f"vpn-gateway {name}"}]}
    assert replay(rest_event("POST", "/v1/graph", relabelled, key=key))["statusCode"] == 200  # refills the cache
    memory = {**MEMORY, "name": name, "body": f"The VPN change {name} is on Monday.", "idempotency_key": name,
              "relations": [{"from": "IT Team", "to": "vpn", "kind": name.replace("vpn-", "")}]}  # a new edge
    assert replay(rest_event("POST", "/v1/memories", memory, key=key))["statusCode"] == 201


def _refusing(operation: str) -> Any:
    """botocore's _make_api_call, throttling every `operation` (the others go through, recorded)."""
    through = botocore.client.BaseClient._make_api_call

    def make_api_call(client: Any, name: str, params: dict[str, Any]) -> Any:
        if name == operation:
            raise ClientError({"Error": {"Code": "SlowDown", "Message": "Please reduce your request rate."}}, name)
        return through(client, name, params)

    return make_api_call


def _staged_writeback(key: str) -> None:
    """An OB1 write-back larger than one transaction: staged, committed, published (dynamodb_memory_staging);
    then one whose stage transaction fails: the stage is discarded, its record deleted last."""
    client = Ob1Client(key)
    assert client.ok("POST", "/writeback", largest_payload(WS, "iam", staging.CHUNK + 6))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(botocore.client.BaseClient, "_make_api_call", _refusing("TransactWriteItems"))
        status, answer, _ = client.call("POST", "/writeback", largest_payload(WS, "iam-2", staging.CHUNK + 6))
    assert status >= 500, answer


def _forget_a_principal() -> None:
    """A person with a key, a personal memory and a recall trace, forgotten by an operator (`api:admin`)."""
    from agentkb.services.access.api_keys import create_api_key

    ports = get_ports()
    leaver, _ = create_api_key(ports.keys, ports.secrets, [WS], ["api:read", "api:write"], "leaver")
    admin, _ = create_api_key(ports.keys, ports.secrets, [WS], ["api:admin"], "ops")
    memory = {**MEMORY, "name": "leaver-note", "visibility": "personal", "idempotency_key": "leaver"}
    assert replay(rest_event("POST", "/v1/memories", memory, key=leaver))["statusCode"] == 201
    recall = json.loads(json.loads((EVENTS / "recall" / "recall_ok.json").read_text())["body"])
    assert Ob1Client(leaver).ok("POST", "/recall", {**recall, "workspace_id": WS})
    gone = invoke("ingest", rest_event("DELETE", "/v1/principals/leaver", key=admin, query={"workspace_id": WS},
                                       resource="/v1/principals/{principalId}"))
    assert gone["statusCode"] == 200 and body_of(gone)["removed"]["keys"] == 1, body_of(gone)


def _explained(grant: Grant) -> bool:
    return any(key in UNEXERCISED_GRANTS for key in _reason_keys(grant))


def _reason_keys(grant: Grant) -> tuple[str, ...]:
    """How infra/grant_reasons.py may name a grant: its action, alone or after its function and/or Sid."""
    return (grant.action, f"{grant.function} {grant.action}", f"{grant.sid} {grant.action}",
            f"{grant.function} {grant.sid} {grant.action}")


def test_every_call_is_granted_and_every_grant_is_used(aws_backend: AwsBackend, synthesized: Any,  # noqa: F811
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Given every function's synthesized grants, and every call each function makes driving all its routes
    grants = FunctionGrants.synthesized(synthesized.data_json, synthesized.api_json, REGION)
    recorder = Recorder()
    recorder.install(monkeypatch, aws_backend.clients, aws_backend.opensearch)
    _drive(aws_backend)
    deployment = Deployment(grants, dict(os.environ), REGION)
    # When each call is authorized as AWS would authorize it
    denied, used = defaultdict(set), set()
    for call in recorder.calls:
        for request in deployment.requests(call):
            allowing = grants.allows(request)
            if not allowing:
                denied[request.function].add(f"{request.action} on {request.resource} ({request.call})")
            used.update(allowing)
    # Then every call is allowed, and every grant is used by a call or carries its reason
    assert {call.function for call in recorder.calls} == {spec.name for spec in c.FUNCTIONS}
    assert dict(denied) == {}
    unused = sorted(f"{g.function}: {g.action} on {g.resource} ({g.sid})" for g in grants.grants
                    if g not in used and not _explained(g))
    assert unused == []


def test_every_written_reason_names_a_synthesized_grant(synthesized: Any) -> None:
    grants = FunctionGrants.synthesized(synthesized.data_json, synthesized.api_json, REGION).grants
    names = {key for g in grants for key in _reason_keys(g)}
    assert sorted(set(UNEXERCISED_GRANTS) - names) == []
    assert all(len(reason) > 40 for reason in UNEXERCISED_GRANTS.values())
