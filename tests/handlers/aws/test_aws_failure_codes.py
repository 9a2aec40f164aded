"""Honest failure codes on the AWS adapters: a retryable dependency failure (throttling, a timeout, a 5xx from
the service, a lost connection) answers 503 + Retry-After; a permanent one (a rejected request, denied access, a
missing table) answers 500 INTERNAL_ERROR with no internals and no Retry-After, and is logged with its cause.

DynamoDB, S3 and Secrets Manager run on moto with single calls made to fail; Bedrock and OpenSearch are the
deterministic fakes of aws_backend.py answering an error instead.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from botocore.stub import Stubber

from agentkb.adapters.aws.dynamodb import tables as dynamodb_tables
from agentkb.adapters.aws.opensearch import transport as aws_http
from agentkb.adapters.aws.opensearch.transport import HttpResponse
from agentkb.composition import get_ports, reset_ports
from testkit.aws_backend import TABLE_CALLS, AwsBackend
from testkit.environment import REGION
from tests.helpers import body_of, invoke, response_headers, rest_event

SEARCH = "/api/v2/knowledge/search"


def client_error(code: str, status: int, operation: str = "Call") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"internal detail of {code}"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, operation)


PERMANENT = [client_error("ValidationException", 400), client_error("AccessDeniedException", 400),
             client_error("ResourceNotFoundException", 400)]
RETRYABLE = [client_error("ProvisionedThroughputExceededException", 400), client_error("InternalServerError", 500),
             client_error("SomethingNew", 503), ReadTimeoutError(endpoint_url="https://dynamodb"),
             EndpointConnectionError(endpoint_url="https://dynamodb")]


def permanent(response: dict[str, Any], caplog: pytest.LogCaptureFixture, cause: str) -> None:
    """500 INTERNAL_ERROR, the generic message, no Retry-After, no internals; the log names the cause."""
    body = body_of(response)
    assert response["statusCode"] == 500, body
    assert body == {"error": {"code": "INTERNAL_ERROR", "message": "Internal server error"}}
    assert "retry-after" not in response_headers(response)
    logged = [(r.levelname, r.getMessage(), str(getattr(r, "cause", ""))) for r in caplog.records]
    assert any(level == "ERROR" and cause in why for level, _, why in logged), logged


def retryable(response: dict[str, Any]) -> None:
    body = body_of(response)
    assert response["statusCode"] == 503, body
    assert body["error"]["code"] == "SERVICE_UNAVAILABLE" and "internal detail" not in json.dumps(body)
    assert int(response_headers(response)["retry-after"]) >= 1


def fail_table(monkeypatch: pytest.MonkeyPatch, table: str, error: Exception) -> None:
    """Every call of the shared DynamoDB client that names `table` raises `error`."""
    client = dynamodb_tables.aws_client("dynamodb", REGION, 10.0, 3)
    for name in TABLE_CALLS:
        real = getattr(client, name)

        def call(*args: Any, _real: Any = real, **params: Any) -> Any:
            if table in json.dumps(params, default=str):
                raise error
            return _real(*args, **params)

        monkeypatch.setattr(client, name, call)


def knowledge(backend: AwsBackend, key: str) -> str:
    created = invoke("ingest", rest_event("POST", "/api/v2/knowledge/bases", {"workspaceId": "ws1", "name": "kb"},
                                          key=key))
    assert created["statusCode"] == 201, body_of(created)
    kb: str = body_of(created)["data"]["id"]
    added = invoke("ingest", rest_event("POST", f"/api/v2/knowledge/bases/{kb}/documents",
                                        {"workspaceId": "ws1", "name": "a.md", "content": "Refunds take five days."},
                                        key=key, resource="/api/v2/knowledge/bases/{knowledgeBaseId}/documents"))
    assert added["statusCode"] == 201, body_of(added)
    return kb


def search(key: str, kb: str, mode: str = "hybrid") -> dict[str, Any]:
    return invoke("search", rest_event("POST", SEARCH, {"workspaceId": "ws1", "knowledgeBaseIds": [kb],
                                                        "query": "refunds", "searchMode": mode}, key=key))


@pytest.mark.parametrize("error", PERMANENT, ids=lambda e: str(e)[:40])
def test_a_permanent_dynamodb_failure_is_500_and_logged(aws_backend: AwsBackend, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture, error: Exception) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = knowledge(aws_backend, key)
    caplog.clear()
    fail_table(monkeypatch, aws_backend.env.tables["catalog"], error)
    permanent(search(key, kb), caplog, error.response["Error"]["Code"])  # type: ignore[attr-defined]


@pytest.mark.parametrize("error", RETRYABLE, ids=lambda e: str(e)[:40])
def test_a_retryable_dynamodb_failure_is_503_with_retry_after(aws_backend: AwsBackend, error: Exception,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = knowledge(aws_backend, key)
    fail_table(monkeypatch, aws_backend.env.tables["catalog"], error)
    retryable(search(key, kb))


def test_a_deleted_table_is_500_on_real_moto(aws_backend: AwsBackend, caplog: pytest.LogCaptureFixture) -> None:
    # Given a deployment whose catalog table is gone (moto answers ResourceNotFoundException itself)
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = knowledge(aws_backend, key)
    boto3.client("dynamodb", region_name=REGION).delete_table(TableName=aws_backend.env.tables["catalog"])
    caplog.clear()
    permanent(search(key, kb), caplog, "ResourceNotFoundException")


@pytest.mark.parametrize(("code", "status", "expected"), [("AccessDeniedException", 400, 500),
                                                          ("InternalServiceError", 500, 503)])
def test_secrets_manager_failure_at_the_gate(aws_backend: AwsBackend, caplog: pytest.LogCaptureFixture,
                                             code: str, status: int, expected: int) -> None:
    key = aws_backend.key(["ws1"], ["api:read"])
    reset_ports()  # a fresh execution environment: the pepper is not cached yet
    stubbed = boto3.client("secretsmanager", region_name=REGION)
    stubber = Stubber(stubbed)
    stubber.add_client_error("get_secret_value", service_error_code=code, http_status_code=status)
    stubber.activate()
    aws_backend.clients["secretsmanager"] = stubbed
    caplog.clear()
    response = search(key, "0f0f0f0f-0000-4000-8000-000000000000")
    permanent(response, caplog, code) if expected == 500 else retryable(response)


@pytest.mark.parametrize(("error", "expected"), [(client_error("AccessDenied", 403, "GetObject"), 500),
                                                 (client_error("NoSuchBucket", 404, "GetObject"), 500),
                                                 (client_error("SlowDown", 503, "GetObject"), 503)])
def test_s3_failure_reading_a_large_snapshot(aws_backend: AwsBackend, monkeypatch: pytest.MonkeyPatch,
                                             caplog: pytest.LogCaptureFixture, error: ClientError,
                                             expected: int) -> None:
    from agentkb.adapters.aws.dynamodb import snapshot as dynamodb_snapshot

    monkeypatch.setattr(dynamodb_snapshot, "INLINE_LIMIT", 10)  # every snapshot body goes to S3
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    body = {"runId": "6f1c2b8e-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "attemptId": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "scope": {"workspaceId": "ws1", "maxClassification": "internal"}, "budget": {"maxTokens": 512},
            "task": "Summarise the refund policy."}
    made = invoke("snapshot", rest_event("POST", "/v1/snapshots", body, key=key))
    assert made["statusCode"] == 201, body_of(made)
    s3 = dynamodb_tables.aws_client("s3", REGION, 10.0, 3)

    def refusing(**_: Any) -> Any:
        raise error

    monkeypatch.setattr(s3, "get_object", refusing)
    caplog.clear()
    got = invoke("snapshot", rest_event("GET", f"/v1/snapshots/{body_of(made)['snapshotId']}", key=key,
                                        resource="/v1/snapshots/{snapshotId}"))
    permanent(got, caplog, error.response["Error"]["Code"]) if expected == 500 else retryable(got)


class RefusingBedrock:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def invoke_model(self, **_: Any) -> Any:
        raise self.error


@pytest.mark.parametrize(("error", "expected"), [(client_error("AccessDeniedException", 403, "InvokeModel"), 500),
                                                 (client_error("ValidationException", 400, "InvokeModel"), 500),
                                                 (client_error("ThrottlingException", 429, "InvokeModel"), 503),
                                                 (ReadTimeoutError(endpoint_url="https://bedrock"), 503)])
def test_bedrock_failure_on_a_vector_search_and_hybrid_degrades(aws_backend: AwsBackend,
                                                                caplog: pytest.LogCaptureFixture,
                                                                error: Exception, expected: int) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = knowledge(aws_backend, key)
    aws_backend.clients["bedrock-runtime"] = RefusingBedrock(error)
    reset_ports()
    caplog.clear()
    response = search(key, kb, "vector")
    permanent(response, caplog, "embedding") if expected == 500 else retryable(response)
    hybrid = search(key, kb)  # the lexical leg still answers, and says it is degraded
    assert hybrid["statusCode"] == 200 and response_headers(hybrid)["x-search-degraded"] == "vector_unavailable"


@pytest.mark.parametrize(("status", "kind", "expected"), [(400, "mapper_parsing_exception", 500),
                                                          (403, "security_exception", 500),
                                                          (503, "", 503), (429, "", 503)])
def test_opensearch_failure_on_a_search(aws_backend: AwsBackend, monkeypatch: pytest.MonkeyPatch,
                                        caplog: pytest.LogCaptureFixture, status: int, kind: str,
                                        expected: int) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = knowledge(aws_backend, key)
    answer = HttpResponse(status, json.dumps({"error": {"type": kind}} if kind else {}).encode(), {})
    monkeypatch.setattr(aws_backend.opensearch, "request", lambda *_: answer)
    monkeypatch.setattr(aws_http, "call_deadline", lambda *_: 0.0)  # no time left for retries: answer at once
    get_ports()
    caplog.clear()
    response = search(key, kb, "vector")
    permanent(response, caplog, kind) if expected == 500 else retryable(response)
