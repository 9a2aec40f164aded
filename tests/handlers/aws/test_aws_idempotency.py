"""Powertools idempotency on DynamoDB (moto): the port's guarantees, the SQS consumer and POST /v1/snapshots."""

from __future__ import annotations

import dataclasses
import json
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from test_aws_ingest_queue import KB, CommittingIndex, CountingEmbedder, _Context, _record

from agentkb.adapters.powertools_idempotency import PowertoolsIdempotency, dynamodb_persistence
from agentkb.composition import get_ports
from agentkb.errors import (
    Conflict,
    DependencyError,
    IdempotencyKeyReused,
    NotFound,
    OperationInProgress,
    ServiceUnavailable,
)
from agentkb.models.domain import Principal
from agentkb.models.idempotency import IdempotentCall
from agentkb.models.snapshot import CreateSnapshotRequest
from agentkb.services.snapshot.service import create_snapshot, request_fingerprint, snapshot_id_for
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv
from tests.helpers import CountingOperation, body_of, mint, response_headers, rest_event

CALL = IdempotentCall("test", "key-1", "payload-1")


class Holder:
    """Holds a key in progress on another thread (another Lambda instance) until released."""

    def __init__(self, idempotency: Any, call: IdempotentCall) -> None:
        self.started, self.release = threading.Event(), threading.Event()
        self.result: Any = None
        self.thread = threading.Thread(target=self._run, args=(idempotency, call), daemon=True)

    def _run(self, idempotency: Any, call: IdempotentCall) -> None:
        def hold() -> dict[str, Any]:
            self.started.set()
            assert self.release.wait(30)
            return {"held": True}

        self.result = idempotency.run_once(call, hold, _Context())

    def __enter__(self) -> Holder:
        self.thread.start()
        assert self.started.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.thread.join(30)


def _items(env: AwsEnv) -> list[dict[str, Any]]:
    return env.client("dynamodb").scan(TableName=env.tables["idempotency"])["Items"]  # type: ignore[no-any-return]


@pytest.fixture()
def idempotency(aws_settings: AwsEnv) -> Any:
    return get_ports().idempotency


def test_first_run_stores_and_a_repeat_replays_without_running(aws_settings: AwsEnv, idempotency: Any) -> None:
    op = CountingOperation()
    first = idempotency.run_once(CALL, op, _Context())
    assert (first.value, first.replayed, op.calls) == ({"run": 1}, False, 1)
    [item] = _items(aws_settings)
    assert item["id"]["S"].startswith("agentkb.test#") and item["status"]["S"] == "COMPLETED"
    assert json.loads(item["data"]["S"]) == {"run": 1} and "expiration" in item  # the table's TTL attribute

    again = idempotency.run_once(CALL, op, _Context())
    assert (again.value, again.replayed, op.calls) == ({"run": 1}, True, 1)


def test_an_in_progress_duplicate_is_rejected_until_the_first_run_completes(idempotency: Any) -> None:
    op = CountingOperation()
    with Holder(idempotency, CALL), pytest.raises(OperationInProgress) as raised:
        idempotency.run_once(CALL, op, _Context())
    assert (raised.value.http_status, raised.value.headers) == (503, {"Retry-After": "2"})
    assert op.calls == 0
    assert idempotency.run_once(CALL, op, _Context()).value == {"held": True}  # the holder's recorded result


def test_an_in_progress_claim_lapses_with_the_invocation_deadline(aws_settings: AwsEnv, idempotency: Any) -> None:
    class Expired:
        @staticmethod
        def get_remaining_time_in_millis() -> int:
            return -1  # the claiming invocation timed out (Lambda killed it mid-run)

    def crash() -> dict[str, Any]:
        raise SystemExit  # not an Exception: Powertools cannot clean up, like a killed sandbox

    with pytest.raises(SystemExit):
        idempotency.run_once(CALL, crash, Expired())
    assert _items(aws_settings)[0]["status"]["S"] == "INPROGRESS"
    op = CountingOperation()
    assert idempotency.run_once(CALL, op, _Context()).value == {"run": 1}


def test_a_failure_removes_the_record_and_a_retry_runs(aws_settings: AwsEnv, idempotency: Any) -> None:
    op = CountingOperation(fail=1)
    with pytest.raises(NotFound):  # the operation's own error, untranslated
        idempotency.run_once(CALL, op, _Context())
    assert _items(aws_settings) == []
    assert idempotency.run_once(CALL, op, _Context()).value == {"run": 2}


def test_the_same_key_with_a_different_payload_is_rejected(idempotency: Any) -> None:
    op = CountingOperation()
    idempotency.run_once(CALL, op, _Context())
    with pytest.raises(IdempotencyKeyReused) as raised:
        idempotency.run_once(IdempotentCall("test", "key-1", "payload-2"), op, _Context())
    assert (raised.value.http_status, raised.value.code, op.calls) == (409, "CONFLICT", 1)
    assert idempotency.run_once(IdempotentCall("other", "key-1", "payload-2"), op, _Context()).replayed is False


@pytest.mark.parametrize(("code", "expected"), [("ProvisionedThroughputExceededException", ServiceUnavailable),
                                                ("AccessDeniedException", DependencyError)])
def test_persistence_failures_become_domain_errors(aws: AwsEnv, code: str, expected: type[Exception]) -> None:
    client = boto3.client("dynamodb", region_name=REGION)
    with Stubber(client) as stub:
        stub.add_client_error("put_item", service_error_code=code)
        runner = PowertoolsIdempotency(dynamodb_persistence(lambda: client, "agentkb-test-idempotency"))
        with pytest.raises(expected):
            runner.run_once(CALL, CountingOperation(), _Context())


# ---- the SQS consumer ------------------------------------------------------------------------------------------


@pytest.fixture()
def wired(aws_settings: AwsEnv, override_ports: Any) -> tuple[AwsEnv, CountingEmbedder, CommittingIndex]:
    bundle = get_ports()
    bundle.catalog.create_knowledge_base(KB)
    embedder, index = CountingEmbedder(), CommittingIndex(bundle.catalog)
    override_ports(embedder=embedder, index=index)  # the ports the queue consumer resolves
    return aws_settings, embedder, index


def _s3_notification(bucket: str, key: str, sequencer: str) -> str:
    return json.dumps({"Records": [{"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": REGION,
                                    "eventName": "ObjectCreated:Put",
                                    "s3": {"bucket": {"name": bucket}, "object": {
                                        "key": key, "size": 10, "eTag": "e" * 32, "sequencer": sequencer}}}]})


def _document(name: str) -> str:
    return json.dumps({"knowledgeBaseId": "kb-1", "workspaceId": "ws1", "name": name,
                       "content": f"Runbook {name}: page the on-call engineer when the error budget burns."})


def test_duplicates_in_one_batch_run_once_and_succeed(wired: tuple[AwsEnv, CountingEmbedder, Any]) -> None:
    from functions.ingest.handler import lambda_handler

    env, embedder, _ = wired
    env.client("s3").put_object(Bucket=env.bucket, Key="uploads/ws1/kb-1/up.md", Body=b"Uploaded runbook text.")
    upload = _s3_notification(env.bucket, "uploads/ws1/kb-1/up.md", "0055AED6DCD90281E5")
    # Given a producer retry (same body, new message id) and a duplicated S3 notification in one batch
    event = {"Records": [_record("m1", _document("a.md")), _record("m2", upload), _record("m3", "not json"),
                         _record("m1-dup", json.dumps(json.loads(_document("a.md")), indent=2)),
                         _record("m2-dup", upload)]}
    result = lambda_handler(event, _Context())
    # Then only the poison record fails, and each document was embedded once
    assert result == {"batchItemFailures": [{"itemIdentifier": "m3"}]}
    assert embedder.calls == 2
    assert {i["status"]["S"] for i in _items(env)} == {"COMPLETED"} and len(_items(env)) == 2  # poison: no record


def test_a_redelivery_while_the_first_runs_is_a_batch_item_failure(
        wired: tuple[AwsEnv, CountingEmbedder, Any]) -> None:
    from functions.ingest.handler import lambda_handler

    env, embedder, _ = wired
    started, release = threading.Event(), threading.Event()
    original = embedder.embed_documents

    def slow(texts: Sequence[str]) -> list[list[float]]:
        if threading.current_thread() is worker:  # only the first instance is slow
            started.set()
            assert release.wait(30)
        return original(texts)

    embedder.embed_documents = slow  # type: ignore[method-assign]
    first: dict[str, Any] = {}
    worker = threading.Thread(target=lambda: first.update(lambda_handler(
        {"Records": [_record("m1", _document("a.md"))]}, _Context())), daemon=True)
    worker.start()
    assert started.wait(30)
    # When SQS hands the same message to a second instance while the first is still embedding
    second = lambda_handler({"Records": [_record("m1", _document("a.md")), _record("m2", _document("b.md"))]},
                            _Context())
    release.set()
    worker.join(30)
    # Then the duplicate is retried later (not processed concurrently); the other record goes through
    assert second == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert first == {"batchItemFailures": []}
    calls = embedder.calls
    # And the retry after completion replays the recorded outcome without embedding again
    assert lambda_handler({"Records": [_record("m1", _document("a.md"))]}, _Context()) == {"batchItemFailures": []}
    assert embedder.calls == calls == 2


def test_a_failed_record_leaves_no_claim_and_its_retry_runs(wired: tuple[AwsEnv, CountingEmbedder, Any]) -> None:
    from functions.ingest.handler import lambda_handler

    env, embedder, _ = wired
    message = json.dumps({**json.loads(_document("c.md")), "knowledgeBaseId": "kb-later"})
    batch = {"Records": [_record("m1", message), _record("m2", _document("d.md"))]}  # not all failing: no raise
    assert lambda_handler(batch, _Context()) == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert len(_items(env)) == 1  # m2's record only
    get_ports().catalog.create_knowledge_base(dataclasses.replace(KB, id="kb-later", name="Later"))
    assert lambda_handler({"Records": [_record("m1", message)]}, _Context()) == {"batchItemFailures": []}
    assert embedder.calls == 2


# ---- POST /v1/snapshots ----------------------------------------------------------------------------------------

ALICE = Principal(id="alice", workspaces=("ws1",), scopes=("api:read", "api:write"))


def _snapshot_body(**extra: Any) -> dict[str, Any]:
    return {"runId": str(uuid.uuid4()), "attemptId": str(uuid.uuid4()),
            "scope": {"workspaceId": "ws1", "maxClassification": "internal"},
            "budget": {"maxTokens": 500, "reservedForOutput": 0}, "task": "Rotate the credentials.",
            "items": [{"class": "policy", "content": "Never log secrets.", "trustTier": "system-policy",
                       "classification": "internal", "sourceId": "policy-1", "sourceRevision": "v1"}], **extra}


def _call_for(body: dict[str, Any]) -> IdempotentCall:
    request = CreateSnapshotRequest.model_validate(body)
    return IdempotentCall("snapshot", snapshot_id_for("ws1", request.runId, request.attemptId),
                          request_fingerprint(request))


@pytest.fixture()
def snapshot_post(aws_settings: AwsEnv) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    from snapshot.handler import lambda_handler

    key = mint(get_ports(), ["ws1"], ["api:read", "api:write"], "alice")
    yield lambda body: lambda_handler(rest_event("POST", "/v1/snapshots", body, key=key), _Context())


def test_snapshot_concurrent_duplicate_answers_503_then_the_stored_snapshot(
        aws_settings: AwsEnv, snapshot_post: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    body = _snapshot_body()
    # Given another instance building the same (workspace, runId, attemptId)
    with Holder(get_ports().idempotency, _call_for(body)):
        busy = snapshot_post(body)
        other = snapshot_post({**body, "task": "Something else."})
    # Then the duplicate answers 503 + Retry-After in the one envelope, and a different body is still a 409
    assert busy["statusCode"] == 503 and response_headers(busy)["retry-after"] == "2"
    assert body_of(busy)["error"] == {"code": "SERVICE_UNAVAILABLE", "details": {"reason": "in_progress"},
                                      "message": "A snapshot for this runId and attemptId is being built; retry "
                                                 "shortly"}
    assert other["statusCode"] == 409 and body_of(other)["error"]["code"] == "CONFLICT"
    # The holder stood in for a build but stored nothing: the retry finds no snapshot behind the record and builds
    assert snapshot_post(body)["statusCode"] == 201
    assert snapshot_post(body)["statusCode"] == 200


def test_snapshot_builds_once_and_replays_the_stored_bytes(
        aws_settings: AwsEnv, snapshot_post: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    body = _snapshot_body()
    first, second = snapshot_post(body), snapshot_post(body)
    assert (first["statusCode"], second["statusCode"]) == (201, 200)
    assert first["body"] == second["body"]
    assert snapshot_post({**body, "task": "Something else."})["statusCode"] == 409
    [record] = _items(aws_settings)
    assert record["id"]["S"].startswith("agentkb.snapshot#") and record["status"]["S"] == "COMPLETED"
    assert json.loads(record["data"]["S"]) == {"snapshotId": body_of(first)["snapshotId"]}


def test_snapshot_service_nested_duplicate_and_failed_build(aws_settings: AwsEnv) -> None:
    from agentkb.api.routes.snapshot import snapshot_deps

    body = _snapshot_body()
    request = CreateSnapshotRequest.model_validate(body)
    deps = snapshot_deps(get_ports())
    inner: dict[str, Any] = {}

    class ReentrantTokenizer:
        """Runs the same request again mid-build: what a concurrent duplicate sees."""

        def __init__(self, wrapped: Any) -> None:
            self.wrapped = wrapped

        def count(self, text: str) -> int:
            if not inner:
                with pytest.raises(OperationInProgress) as raised:
                    create_snapshot(request, ALICE, deps)
                inner["error"] = raised.value
            return int(self.wrapped.count(text))

        def spans(self, text: str) -> list[tuple[int, int]]:
            return list(self.wrapped.spans(text))

    reentrant = dataclasses.replace(deps, tokenizer=ReentrantTokenizer(deps.tokenizer))
    assert create_snapshot(request, ALICE, reentrant).status == 201
    assert isinstance(inner["error"], OperationInProgress)
    assert create_snapshot(request, ALICE, deps).status == 200

    class Failing:
        def count(self, text: str) -> int:
            raise DependencyError("tokenizer down", retryable=True)

    other = CreateSnapshotRequest.model_validate(_snapshot_body())
    with pytest.raises(DependencyError):
        create_snapshot(other, ALICE, dataclasses.replace(deps, tokenizer=Failing()))
    assert create_snapshot(other, ALICE, deps).status == 201  # the failed build left no claim behind
    with pytest.raises(Conflict):
        create_snapshot(CreateSnapshotRequest.model_validate({**other.model_dump(mode="json", by_alias=True,
                                                                                 exclude_none=True),
                                                              "task": "changed"}), ALICE, deps)


def test_snapshot_with_the_idempotency_table_missing_is_a_500_without_retry_after(
        aws_settings: AwsEnv, snapshot_post: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    # A missing table is a broken deployment, not a busy one: a Retry-After would invite retries that cannot succeed
    aws_settings.client("dynamodb").delete_table(TableName=aws_settings.tables["idempotency"])
    response = snapshot_post(_snapshot_body())
    assert response["statusCode"] == 500 and "retry-after" not in response_headers(response)
    assert body_of(response) == {"error": {"code": "INTERNAL_ERROR", "message": "Internal server error"}}
