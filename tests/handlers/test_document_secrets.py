"""Secret provenance of knowledge on the embedded engine, through the real handlers: chunks flagged at ingest,
the document GET lists them, reranking refuses them (409) before the reranker sees any text, snapshots exclude
them, a `refuse` knowledge base stores nothing, and chunks stored before flags existed are scanned on read."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.models.domain import RerankOutcome
from tests.helpers import body_of, embedded_db, invoke, rest_event

BASES = "/api/v2/knowledge/bases"
_rng = random.Random(23)
AWS_SECRET = "".join(_rng.choice(string.ascii_letters + string.digits + "/+") for _ in range(40))
LEAKY = f"Deploy notes for the billing sync.\n\nsecret_access_key = {AWS_SECRET}\n"
CLEAN = "Deploy notes for the billing sync: run the job nightly and page the on-call when it fails."


class SpyReranker:
    """A reranker that records every text it was sent (it must see none when a candidate is flagged)."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def rerank(self, query: str, documents: list[str], model: str | None = None) -> RerankOutcome:
        self.sent.extend(documents)
        return RerankOutcome("applied", scores=[1.0 / (i + 1) for i in range(len(documents))])


def call(function: str, method: str, path: str, key: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
    response = invoke(function, rest_event(method, path, body, key=key, **kw))
    return response["statusCode"], body_of(response)


def create_kb(key: str, policy: str | None = None, name: str = "notes") -> dict[str, Any]:
    body = {"workspaceId": "ws1", "name": name, **({"secretPolicy": policy} if policy else {})}
    status, out = call("ingest", "POST", BASES, key, body)
    assert status == 201, out
    return out["data"]  # type: ignore[no-any-return]


def add(key: str, kb: str, name: str, content: str) -> tuple[int, Any]:
    return call("ingest", "POST", f"{BASES}/{kb}/documents", key, {"workspaceId": "ws1", "name": name,
                                                                   "content": content})


def search(key: str, kb: str, **extra: Any) -> tuple[int, Any]:
    return call("search", "POST", "/api/v2/knowledge/search", key,
                {"workspaceId": "ws1", "knowledgeBaseIds": [kb], "query": "billing sync deploy notes", **extra})


def get_doc(key: str, kb: str, doc: str) -> tuple[int, Any]:
    return call("ingest", "GET", f"{BASES}/{kb}/documents/{doc}", key, query={"workspaceId": "ws1"})


@pytest.fixture()
def spy(override_ports: Any) -> SpyReranker:
    reranker = SpyReranker()
    override_ports(reranker=reranker)
    return reranker


def test_flagged_chunks_are_listed_and_never_reranked(rw_key: str, spy: SpyReranker) -> None:
    # Given a default (flag) knowledge base whose clean document reranks as before (the spy sees its text)
    kb = create_kb(rw_key)
    assert kb["secretPolicy"] == "flag"
    status, clean = add(rw_key, kb["id"], "clean.md", CLEAN)
    assert status == 201 and clean["data"]["secretChunks"] == []
    status, out = search(rw_key, kb["id"], rerankerEnabled=True)
    assert status == 200 and out["data"]["rerankerStatus"] == "applied" and spy.sent == [CLEAN]
    spy.sent.clear()
    # And a document with an AWS secret
    status, leaky = add(rw_key, kb["id"], "leaky.md", LEAKY)
    assert status == 201 and leaky["data"]["secretChunks"] == [0], leaky
    assert AWS_SECRET not in json.dumps(leaky)
    # Then the document GET names the flagged chunk, never the secret's kind in place of the text
    status, got = get_doc(rw_key, kb["id"], leaky["data"]["id"])
    assert status == 200 and got["data"]["secretChunks"] == [0]
    # When a reranked search's candidates include the flagged chunk
    status, refused = search(rw_key, kb["id"], rerankerEnabled=True)
    # Then 409 CONFLICT names the chunk and its document, and the reranker was sent nothing
    assert status == 409 and refused["error"]["code"] == "CONFLICT", refused
    details = refused["error"]["details"]
    assert details["reason"] == "secret_provenance"
    assert [c["documentId"] for c in details["chunks"]] == [leaky["data"]["id"]]
    assert spy.sent == [] and AWS_SECRET not in json.dumps(refused)
    # And without reranking the search answers as before (the contract enforces provenance on reranking)
    status, plain = search(rw_key, kb["id"])
    assert status == 200 and {r["documentName"] for r in plain["data"]["results"]} == {"leaky.md", "clean.md"}


def test_reranking_refuses_even_without_a_reranker(rw_key: str) -> None:
    # The embedded engine has no reranker by default: the refusal does not depend on one being there
    kb = create_kb(rw_key)
    add(rw_key, kb["id"], "leaky.md", LEAKY)
    status, out = search(rw_key, kb["id"], rerankerEnabled=True)
    assert status == 409 and out["error"]["details"]["reason"] == "secret_provenance"


def test_a_refusing_knowledge_base_stores_nothing(rw_key: str) -> None:
    kb = create_kb(rw_key, "refuse")
    assert kb["secretPolicy"] == "refuse"
    status, out = add(rw_key, kb["id"], "leaky.md", LEAKY)
    assert status == 422 and out["error"]["code"] == "UNPROCESSABLE", out
    assert out["error"]["details"]["reason"] == "secret_detected" and AWS_SECRET not in json.dumps(out)
    status, listed = call("ingest", "GET", f"{BASES}/{kb['id']}/documents", rw_key, query={"workspaceId": "ws1"})
    assert status == 200 and listed["data"] == []
    status, found = search(rw_key, kb["id"])
    assert status == 200 and found["data"]["results"] == []
    assert add(rw_key, kb["id"], "clean.md", CLEAN)[0] == 201  # clean documents are welcome


def test_the_secret_policy_is_kept_and_an_unknown_one_is_a_400(rw_key: str) -> None:
    kb = create_kb(rw_key, "flag")
    status, got = call("ingest", "GET", f"{BASES}/{kb['id']}", rw_key, query={"workspaceId": "ws1"})
    assert status == 200 and got["data"]["secretPolicy"] == "flag"
    status, out = call("ingest", "POST", BASES, rw_key, {"workspaceId": "ws1", "name": "x", "secretPolicy": "drop"})
    assert status == 400 and out["error"]["code"] == "BAD_REQUEST"


def test_snapshots_exclude_flagged_chunks(rw_key: str) -> None:
    kb = create_kb(rw_key)
    leaky = add(rw_key, kb["id"], "leaky.md", LEAKY)[1]["data"]
    add(rw_key, kb["id"], "clean.md", CLEAN)
    status, snap = call("snapshot", "POST", "/v1/snapshots", rw_key, snapshot_request(kb["id"]))
    assert status in (200, 201), snap
    text = json.dumps(snap)
    assert AWS_SECRET not in text and CLEAN in text
    excluded = [e for e in snap["exclusions"] if e.get("sourceId") == leaky["id"]]
    assert excluded and excluded[0]["reason"] == "classification" and excluded[0]["secretDetected"] is True


def snapshot_request(kb_id: str) -> dict[str, Any]:
    return {"runId": "6f1c2b8e-3c4d-4e5f-8a9b-0c1d2e3f4a5b", "attemptId": "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "stepId": "11111111-2222-4333-8444-555555555555", "strategy": "default",
            "scope": {"workspaceId": "ws1", "maxClassification": "restricted"},
            "budget": {"maxTokens": 4000, "reservedForOutput": 100}, "task": "billing sync deploy notes",
            "sources": {"knowledge": {"knowledgeBaseIds": [kb_id], "query": "billing sync deploy notes", "topK": 5}}}


def test_chunks_stored_before_flags_are_scanned_on_read(rw_key: str, bundle: Ports, spy: SpyReranker) -> None:
    # Given a document whose rows look like an earlier version wrote them (no chunk flags, no flagged list)
    kb = create_kb(rw_key)
    doc = add(rw_key, kb["id"], "leaky.md", LEAKY)[1]["data"]
    conn = embedded_db(bundle).connection()
    conn.execute("UPDATE chunks SET secret = NULL")
    conn.execute("UPDATE documents SET secret_chunks = NULL")
    conn.execute("UPDATE knowledge_bases SET version = version + 1")
    # Then the GET says nothing was scanned, reranking still refuses it, and a re-ingest scans and flags it
    assert "secretChunks" not in get_doc(rw_key, kb["id"], doc["id"])[1]["data"]
    status, out = search(rw_key, kb["id"], rerankerEnabled=True)
    assert status == 409 and spy.sent == []
    status, again = add(rw_key, kb["id"], "leaky.md", LEAKY)
    assert status == 201 and again["data"]["secretChunks"] == [0] and again["data"]["revision"] == 2
