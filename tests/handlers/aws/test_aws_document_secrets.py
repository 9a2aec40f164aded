"""Secret provenance of knowledge on the AWS adapters (moto DynamoDB + the in-memory OpenSearch): the chunk
records carry the flag, the DynamoDB document record lists the flagged chunks, reranking answers 409 before the
Bedrock reranker is called, snapshots exclude flagged chunks, and a `refuse` knowledge base stores nothing."""

from __future__ import annotations

import json
import random
import string
from typing import Any

from testkit.aws_backend import AwsBackend
from testkit.bedrock import FakeAgentRuntime
from tests.helpers import body_of, invoke, rest_event

BASES = "/api/v2/knowledge/bases"
DOCS = f"{BASES}/{{knowledgeBaseId}}/documents"
_rng = random.Random(2023)
AWS_SECRET = "".join(_rng.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
LEAKY = f"Deploy notes for the billing sync.\n\nsecret_access_key = {AWS_SECRET}\n"
CLEAN = "Deploy notes for the billing sync: run the job nightly and page the on-call when it fails."


class SpyAgentRuntime(FakeAgentRuntime):
    def __init__(self) -> None:
        self.sent: list[str] = []

    def rerank(self, **request: Any) -> dict[str, Any]:
        self.sent.extend(s["inlineDocumentSource"]["textDocument"]["text"] for s in request["sources"])
        return super().rerank(**request)


def call(function: str, method: str, path: str, key: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
    response = invoke(function, rest_event(method, path, body, key=key, **kw))
    return response["statusCode"], body_of(response)


def kb_with(key: str, policy: str = "flag") -> str:
    status, out = call("ingest", "POST", BASES, key, {"workspaceId": "ws1", "name": "notes", "secretPolicy": policy})
    assert status == 201 and out["data"]["secretPolicy"] == policy, out
    return str(out["data"]["id"])


def add(key: str, kb: str, name: str, content: str) -> tuple[int, Any]:
    return call("ingest", "POST", f"{BASES}/{kb}/documents", key,
                {"workspaceId": "ws1", "name": name, "content": content}, resource=DOCS)


def search(key: str, kb: str, **extra: Any) -> tuple[int, Any]:
    return call("search", "POST", "/api/v2/knowledge/search", key,
                {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "billing sync deploy notes", **extra})


def test_flagged_chunks_are_stored_listed_and_never_reranked(aws_backend: AwsBackend) -> None:
    spy = SpyAgentRuntime()
    aws_backend.clients["bedrock-agent-runtime"] = spy
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = kb_with(key)
    status, clean = add(key, kb, "clean.md", CLEAN)
    assert status == 201 and clean["data"]["secretChunks"] == []
    # Given a clean knowledge base, reranking reaches Bedrock (so the spy would see a flagged text)
    status, out = search(key, kb, rerankerEnabled=True, rerankerModel="rerank-v3.5")
    assert status == 200 and out["data"]["rerankerStatus"] == "applied" and spy.sent == [CLEAN]
    spy.sent.clear()
    # When a document with a secret is added
    status, leaky = add(key, kb, "leaky.md", LEAKY)
    assert status == 201 and leaky["data"]["secretChunks"] == [0], leaky
    # Then its OpenSearch chunk record carries the flag and the DynamoDB record lists the chunk
    sources = [d for index in aws_backend.opensearch.indexes.values() for d in index.values()
               if d.get("document_id") == leaky["data"]["id"] and "chunk_index" in d and "embedding" in d]
    assert sources and all(d["secret"] is True for d in sources)
    status, got = call("ingest", "GET", f"{BASES}/{kb}/documents/{leaky['data']['id']}", key,
                       query={"workspaceId": "ws1"}, resource=f"{DOCS}/{{documentId}}")
    assert status == 200 and got["data"]["secretChunks"] == [0], got
    # And a reranked search answers 409 before Bedrock is called; a plain search still answers
    status, refused = search(key, kb, rerankerEnabled=True, rerankerModel="rerank-v3.5")
    assert status == 409 and refused["error"]["details"]["reason"] == "secret_provenance", refused
    assert spy.sent == [] and AWS_SECRET not in json.dumps(refused)
    assert refused["error"]["details"]["chunks"][0]["documentId"] == leaky["data"]["id"]
    assert search(key, kb)[0] == 200


def test_a_refusing_knowledge_base_stores_nothing(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = kb_with(key, "refuse")
    before = aws_backend.opensearch.sent[:]
    status, out = add(key, kb, "leaky.md", LEAKY)
    assert status == 422 and out["error"]["details"]["reason"] == "secret_detected", out
    assert AWS_SECRET not in json.dumps(out)
    assert not [p for _, p in aws_backend.opensearch.sent[len(before):] if p.endswith("_bulk")]
    status, listed = call("ingest", "GET", f"{BASES}/{kb}/documents", key, query={"workspaceId": "ws1"},
                          resource=DOCS)
    assert status == 200 and listed["data"] == []


def test_snapshots_exclude_flagged_chunks(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = kb_with(key)
    leaky = add(key, kb, "leaky.md", LEAKY)[1]["data"]
    add(key, kb, "clean.md", CLEAN)
    request = {"runId": "6f1c2b8e-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "attemptId": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
               "stepId": "11111111-2222-4333-8444-555555555555", "strategy": "default",
               "scope": {"workspaceId": "ws1", "maxClassification": "restricted"},
               "budget": {"maxTokens": 4000, "reservedForOutput": 100}, "task": "billing sync deploy notes",
               "sources": {"knowledge": {"knowledgeBaseIds": [kb], "query": "billing sync deploy notes", "topK": 5}}}
    status, snap = call("snapshot", "POST", "/v1/snapshots", key, request)
    assert status in (200, 201), snap
    assert AWS_SECRET not in json.dumps(snap) and CLEAN in json.dumps(snap)
    excluded = [e for e in snap["exclusions"] if e.get("sourceId") == leaky["id"]]
    assert excluded and excluded[0]["reason"] == "classification" and excluded[0]["secretDetected"] is True
