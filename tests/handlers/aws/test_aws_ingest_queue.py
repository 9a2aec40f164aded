"""The ingest queue through the real ingest lambda_handler: SQS batches, S3 uploads, partial failures, re-delivery."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote_plus

import pytest

from agentkb.composition import get_ports
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase
from agentkb.services.ingest.queue import PoisonMessage, parse_message, upload_location
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv

KB = KnowledgeBase("kb-1", "ws1", "Runbooks", None, EmbeddingProfile("amazon.titan-embed-text-v2:0", 256), (),
                   "2024-01-01T00:00:00Z")


class CountingEmbedder:
    model_id, dimension = "amazon.titan-embed-text-v2:0", 256

    def __init__(self) -> None:
        self.calls = 0

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += len(texts)
        return [[1.0] + [0.0] * 255 for _ in texts]


class CommittingIndex:
    """Stands in for OpenSearch: keeps chunks, commits the document record to the DynamoDB catalog like it."""

    def __init__(self, catalog: Any) -> None:
        self.catalog = catalog
        self.chunks: dict[str, list[Chunk]] = {}

    def write_document(self, kb: KnowledgeBase, document: Document, chunks: Sequence[Chunk],
                       replaces: int | None = None) -> None:
        self.catalog.claim_revision(document, replaces)
        self.chunks[document.id] = list(chunks)
        self.catalog.put_document(document)


def _record(message_id: str, body: str) -> dict[str, Any]:
    return {"messageId": message_id, "receiptHandle": f"handle-{message_id}", "body": body,
            "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "1700000000000",
                           "SenderId": "AIDAEXAMPLE", "ApproximateFirstReceiveTimestamp": "1700000000001"},
            "messageAttributes": {}, "md5OfBody": "0" * 32, "eventSource": "aws:sqs",
            "eventSourceARN": f"arn:aws:sqs:{REGION}:123456789012:agentkb-test-ingest", "awsRegion": REGION}


def _s3_notification(bucket: str, key: str) -> str:
    return json.dumps({"Records": [{"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": REGION,
                                    "eventName": "ObjectCreated:Put",
                                    "s3": {"bucket": {"name": bucket, "arn": f"arn:aws:s3:::{bucket}"},
                                           "object": {"key": quote_plus(key), "size": 10}}}]})


class _Context:
    function_name = "agentkb-ingest"
    memory_limit_in_mb = 1536
    invoked_function_arn = f"arn:aws:lambda:{REGION}:123456789012:function:agentkb-ingest"
    aws_request_id = "req-1"

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return 60_000


@pytest.fixture()
def wired(aws_settings: AwsEnv, override_ports: Any) -> tuple[AwsEnv, CountingEmbedder, CommittingIndex]:
    bundle = get_ports()
    bundle.catalog.create_knowledge_base(KB)
    embedder, index = CountingEmbedder(), CommittingIndex(bundle.catalog)
    override_ports(embedder=embedder, index=index)  # the ports the queue consumer resolves
    return aws_settings, embedder, index


def test_a_batch_reports_only_its_failing_records(wired: tuple[AwsEnv, CountingEmbedder, CommittingIndex]) -> None:
    from functions.ingest.handler import lambda_handler

    env, embedder, index = wired
    env.client("s3").put_object(Bucket=env.bucket, Key="uploads/ws1/kb-1/notes/on call.md",
                                Body=b"Page the on-call engineer when the error budget burns.")
    good = {"knowledgeBaseId": "kb-1", "workspaceId": "ws1", "name": "rotate.md",
            "content": "Rotate the database credentials every ninety days."}
    event = {"Records": [
        _record("m1", json.dumps(good)),
        _record("m2", "not json"),
        _record("m3", _s3_notification(env.bucket, "uploads/ws1/kb-1/notes/on call.md")),
        _record("m4", json.dumps({**good, "knowledgeBaseId": "kb-missing"})),
        _record("m5", json.dumps({**good, "name": "", "knowledgeBaseId": "kb-1"})),
    ]}
    result = lambda_handler(event, _Context())
    assert result == {"batchItemFailures": [{"itemIdentifier": "m2"}, {"itemIdentifier": "m4"},
                                            {"itemIdentifier": "m5"}]}
    catalog = get_ports().catalog
    assert catalog.find_document_by_name("kb-1", "rotate.md") is not None
    assert catalog.find_document_by_name("kb-1", "notes/on call.md").chunk_count == 1  # type: ignore[union-attr]
    calls = embedder.calls

    # When SQS re-delivers m1, Then nothing is embedded or indexed again
    again = lambda_handler({"Records": [_record("m1", json.dumps(good))]}, _Context())
    assert again == {"batchItemFailures": []}
    assert embedder.calls == calls
    assert catalog.find_document_by_name("kb-1", "rotate.md").revision == 1  # type: ignore[union-attr]


def test_api_events_still_reach_the_resolver(wired: tuple[AwsEnv, CountingEmbedder, CommittingIndex]) -> None:
    from functions.ingest.handler import lambda_handler

    from tests.helpers import rest_event

    response = lambda_handler(rest_event("GET", "/health"), _Context())
    assert response["statusCode"] in (200, 404)  # /health lives on the search function; never a batch reply
    assert "batchItemFailures" not in response


def test_message_parsing_rules() -> None:
    assert parse_message(json.dumps({"Event": "s3:TestEvent"}), lambda b, k: b"") == []
    assert upload_location("uploads/ws/kb/a/b.md") == ("ws", "kb", "a/b.md")
    for bad in ("uploads/ws/kb", "other/ws/kb/x", "uploads//kb/x"):
        with pytest.raises(PoisonMessage):
            upload_location(bad)
    with pytest.raises(PoisonMessage):
        parse_message(json.dumps({"workspaceId": "ws1", "name": "n", "content": "c"}), lambda b, k: b"")
    with pytest.raises(PoisonMessage):
        parse_message(_s3_notification("b", "uploads/ws/kb/bin"), lambda b, k: b"\xff\xfe")
