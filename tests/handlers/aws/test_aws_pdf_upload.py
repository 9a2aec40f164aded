"""A PDF uploaded on AWS is indexed end to end (issue 16): S3 upload -> queue -> the real ingest lambda_handler
(pypdf, as the ingest function's own layer brings it) -> DynamoDB catalog + OpenSearch chunks with their pages ->
the search function's hits carry `metadata.pages`. moto serves S3, SQS and DynamoDB; OpenSearch is the fake."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote_plus

from testkit.aws_backend import AwsBackend
from testkit.environment import REGION
from tests.helpers import body_of, invoke, rest_event
from tests.unit.data_ingest.docfiles import pdf_bytes

BASES = "/api/v2/knowledge/bases"
TOPICS = ("installation license activation", "backup snapshot retention", "firewall port allowlist")


def _page(topic: str) -> str:
    """One page of prose about one topic, long enough to be chunked on its own."""
    words = topic.split()
    return " ".join(f"The {words[i % 3]} step {i} of the {topic} procedure is documented here." for i in range(60))


def _upload_delivered(backend: AwsBackend, key: str) -> dict[str, Any]:
    """The S3 notification of `key`, delivered by SQS to the real ingest lambda_handler."""
    from ingest.handler import lambda_handler

    notification = {"Records": [{"eventVersion": "2.1", "eventSource": "aws:s3", "awsRegion": REGION,
                                 "eventName": "ObjectCreated:Put",
                                 "s3": {"bucket": {"name": backend.env.bucket},
                                        "object": {"key": quote_plus(key), "size": 1}}}]}
    record = {"messageId": "m1", "receiptHandle": "h1", "body": json.dumps(notification),
              "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {}, "md5OfBody": "0" * 32,
              "eventSource": "aws:sqs", "eventSourceARN": f"arn:aws:sqs:{REGION}:123456789012:agentkb-test-ingest",
              "awsRegion": REGION}
    result: dict[str, Any] = lambda_handler({"Records": [record]}, SimpleNamespace(
        function_name="agentkb-ingest", memory_limit_in_mb=1536, aws_request_id="r1",
        invoked_function_arn=f"arn:aws:lambda:{REGION}:123456789012:function:agentkb-ingest",
        get_remaining_time_in_millis=lambda: 60_000))
    return result


def _call(function: str, method: str, path: str, key: str, body: Any = None, **query: str) -> tuple[int, Any]:
    response = invoke(function, rest_event(method, path, body, key=key, query=query or None))
    return response["statusCode"], body_of(response)


def test_a_pdf_upload_is_searchable_with_its_page_numbers(aws_backend: AwsBackend) -> None:
    # Given a knowledge base and a three-page PDF with a text layer uploaded under uploads/<ws>/<kb>/
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    status, created = _call("ingest", "POST", BASES, key, {"workspaceId": "ws1", "name": "manuals"})
    assert status == 201, created
    kb = created["data"]["id"]
    aws_backend.env.client("s3").put_object(Bucket=aws_backend.env.bucket, Key=f"uploads/ws1/{kb}/ops/manual.pdf",
                                            Body=pdf_bytes([_page(t) for t in TOPICS]))
    # When the queue delivers its notification to the ingest function
    assert _upload_delivered(aws_backend, f"uploads/ws1/{kb}/ops/manual.pdf") == {"batchItemFailures": []}
    # Then the document is ready, chunked page by page
    status, listed = _call("ingest", "GET", f"{BASES}/{kb}/documents", key, workspaceId="ws1")
    [document] = listed["data"]
    assert (document["name"], document["status"]) == ("ops/manual.pdf", "ready")
    assert document["chunkCount"] >= len(TOPICS)
    # And each topic's best hit names the page it is on, through the search function
    for page, topic in enumerate(TOPICS, start=1):
        status, found = _call("search", "POST", "/api/v2/knowledge/search", key, {
            "workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": f"{topic} procedure", "topK": 1,
            "searchMode": "hybrid"})
        assert status == 200, found
        [hit] = found["data"]["results"]
        assert hit["documentName"] == "ops/manual.pdf"
        assert hit["metadata"]["pages"] == [page], (topic, hit["metadata"])
