"""Issue 16 on the AWS engine (moto DynamoDB + the in-memory OpenSearch): management routes, document text in
parts, knowledge-base delete everywhere, key list/revoke with an immediate 401, bulk ingest identity."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from agentkb.adapters.aws.dynamodb.documents import TEXT_PART_CHARS
from agentkb.composition import get_ports
from agentkb.services.extract.files import ExtractedText
from agentkb.services.ingest.bulk import IngestSummary, SourceDocument, ingest_documents, prune
from agentkb.services.ingest.service import IngestDeps
from testkit.aws_backend import AwsBackend
from tests.helpers import body_of, invoke, rest_event

BASES = "/api/v2/knowledge/bases"


def call(method: str, path: str, key: str, body: Any = None, **query: str) -> tuple[int, Any]:
    function = "search" if path.endswith("/search") else "ingest"
    response = invoke(function, rest_event(method, path, body, key=key, query=query or None))
    return response["statusCode"], body_of(response) if response.get("body") else None


def _kb(key: str, name: str) -> str:
    status, body = call("POST", BASES, key, {"workspaceId": "ws1", "name": name})
    assert status == 201, body
    return str(body["data"]["id"])


def _drain_queue(backend: AwsBackend) -> int:
    """Deliver the ingest queue's messages to the real ingest lambda_handler, as the SQS event source would."""
    from ingest.handler import lambda_handler

    sqs = backend.env.client("sqs")
    messages = sqs.receive_message(QueueUrl=backend.env.queue_url, MaxNumberOfMessages=10).get("Messages", [])
    records = [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:agentkb-test-ingest",
                "awsRegion": "eu-west-1"} for m in messages]
    if records:
        result = lambda_handler({"Records": records}, SimpleNamespace(
            function_name="agentkb-ingest", memory_limit_in_mb=1536, aws_request_id="r",
            invoked_function_arn="arn:aws:lambda:eu-west-1:123456789012:function:agentkb-ingest",
            get_remaining_time_in_millis=lambda: 60_000))
        assert result == {"batchItemFailures": []}
    return len(records)


def test_big_documents_are_accepted_then_indexed_from_the_queue_and_paged(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = _kb(key, "docs")
    big = " ".join(f"word{i}" for i in range(TEXT_PART_CHARS // 4))  # > one DynamoDB text part, > the 201 limit
    ids = []
    for i, content in enumerate(["alpha text", "beta text", big]):
        status, body = call("POST", f"{BASES}/{kb}/documents", key, {"workspaceId": "ws1", "name": f"d{i}.md",
                                                                     "content": content})
        assert status == (202 if content is big else 201), body
        ids.append(body["data"]["id"])
    status, doc = call("GET", f"{BASES}/{kb}/documents/{ids[2]}", key, workspaceId="ws1")
    assert (doc["data"]["status"], doc["data"]["content"]) == ("indexing", big)
    assert _drain_queue(aws_backend) == 1
    status, doc = call("GET", f"{BASES}/{kb}/documents/{ids[2]}", key, workspaceId="ws1")
    assert status == 200 and doc["data"]["content"] == big and doc["data"]["status"] == "ready"
    assert doc["data"]["chunkCount"] > 10
    seen, cursor = [], None
    while True:
        status, page = call("GET", f"{BASES}/{kb}/documents", key, workspaceId="ws1", limit="2",
                            **({"cursor": cursor} if cursor else {}))
        assert status == 200 and len(page["data"]) <= 2, page
        seen += [d["id"] for d in page["data"]]
        if (cursor := page["nextCursor"]) is None:
            break
    assert sorted(seen) == sorted(ids)
    # a rewrite keeps exactly one revision's text
    call("POST", f"{BASES}/{kb}/documents", key, {"workspaceId": "ws1", "name": "d2.md", "content": "short now"})
    assert call("GET", f"{BASES}/{kb}/documents/{ids[2]}", key, workspaceId="ws1")[1]["data"]["content"] == "short now"
    assert len(_items(aws_backend, kb, "DOCTEXT#")) == 3


def _items(backend: AwsBackend, kb: str, prefix: str = "") -> list[dict[str, Any]]:
    ddb, table = backend.env.client("dynamodb"), backend.env.tables["catalog"]
    items = ddb.query(TableName=table, KeyConditionExpression="pk = :pk",
                      ExpressionAttributeValues={":pk": {"S": f"KB#{kb}"}})["Items"]
    return [i for i in items if i["sk"]["S"].startswith(prefix)]


def test_deleting_a_knowledge_base_removes_chunks_records_and_names(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb, kept = _kb(key, "doomed"), _kb(key, "kept")
    for target in (kb, kept):
        call("POST", f"{BASES}/{target}/documents", key, {"workspaceId": "ws1", "name": "a.md",
                                                           "content": "Refunds take five days."})
    assert call("DELETE", f"{BASES}/{kb}", key, workspaceId="ws1")[0] == 204
    chunks = [d for index in aws_backend.opensearch.indexes.values() for d in index.values()]
    assert {d["knowledge_base_id"] for d in chunks} == {kept}
    assert _items(aws_backend, kb) == []
    status, body = call("POST", "/api/v2/knowledge/search", key, {"workspaceId": "ws1", "knowledgeBaseIds": [kb],
                                                                  "query": "refunds"})
    assert status == 404, body
    assert _kb(key, "doomed")  # the name is free again
    status, found = call("POST", "/api/v2/knowledge/search", key, {"workspaceId": "ws1", "knowledgeBaseIds": [kept],
                                                                   "query": "refunds"})
    assert status == 200 and found["data"]["results"]


def test_a_revoked_key_answers_401_on_the_next_request(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    assert call("GET", BASES, key, workspaceId="ws1")[0] == 200
    keys = get_ports().keys
    key_id = key.split("_")[1]
    assert [k.key_id for k in keys.list_keys()] == [key_id]
    assert keys.revoke_key(key_id) is True and keys.revoke_key("missing") is False
    status, body = call("GET", BASES, key, workspaceId="ws1")
    assert status == 401 and body["error"]["code"] == "UNAUTHORIZED"
    assert keys.list_keys()[0].revoked


def test_bulk_ingest_identity_and_prune_on_aws(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = get_ports().catalog.get_knowledge_base("ws1", _kb(key, "bulk"))
    c = get_ports()
    deps = IngestDeps(c.catalog, c.index, c.embedder, c.tokenizer, c.embedding_cache)

    def source(name: str, path: str, text: str) -> SourceDocument:
        return SourceDocument(name, path, ExtractedText(text), {})

    first = ingest_documents(deps, kb, [source("yaml/README.md", "/d/yaml/README.md", "PyYAML parser"),
                                        source("httplib2/README.md", "/d/httplib2/README.md", "HTTP client")],
                             replace=False, summary=IngestSummary(kb.id))
    assert (first.created, first.conflicts) == (2, [])
    clash = ingest_documents(deps, kb, [source("yaml/README.md", "/e/yaml/README.md", "other")], replace=False,
                             summary=IngestSummary(kb.id))
    assert clash.created + clash.updated == 0 and clash.conflicts[0]["existingSourcePath"] == "/d/yaml/README.md"
    again = ingest_documents(deps, kb, [source("yaml/README.md", "/d/yaml/README.md", "PyYAML parser")],
                             replace=False, summary=IngestSummary(kb.id))
    assert again.unchanged == 1
    pruned = IngestSummary(kb.id)
    prune(deps, kb, ["/d"], {"/d/yaml/README.md"}, pruned)
    assert pruned.removed == 1
    names = {d.name for d in c.catalog.list_documents(kb.id, 50)[0]}
    assert names == {"yaml/README.md"}
