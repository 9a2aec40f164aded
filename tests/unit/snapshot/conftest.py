"""Snapshot fixtures: a knowledge base with documents, a demo graph, request builders, the contract validator."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.models.domain import Principal
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.services.ingest import service as ingest
from agentkb.services.ingest.service import IngestDeps
from tests.upstream import OursAndUpstream, ours_and_upstream

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "schemas" / "context-snapshot.schema.json").read_text())
WS = "ws1"
ALICE = Principal(id="alice", workspaces=(WS,), scopes=("api:read", "api:write"))

DOCS = {
    "billing.md": "The billing service charges customers monthly. Invoices are generated on the first day of each "
                  "month. Failed payments are retried three times before the account is suspended.",
    "refunds.md": "Refunds are issued to the original payment method within five business days. A refund larger "
                  "than the invoice total is rejected by the billing service.",
    "tax.md": "Sales tax is computed per jurisdiction at invoice time. Tax-exempt customers must upload a "
              "certificate before their first invoice.",
    "retry.py": "def retry_payment(invoice):\n    # retries failed payments three times\n    return charge(invoice)\n",
}


def validator() -> OursAndUpstream:
    """schemas/context-snapshot.schema.json and the upstream contract (tests/upstream.py)."""
    return ours_and_upstream("context-snapshot.schema.json")


def assert_contract(body: dict[str, Any]) -> None:
    errors = sorted(validator().iter_errors(body), key=str)
    assert not errors, [e.message for e in errors[:3]]


def ingest_deps(bundle: Ports) -> IngestDeps:
    return IngestDeps(bundle.catalog, bundle.index, bundle.embedder, bundle.tokenizer,
                      bundle.embedding_cache)


def make_kb(bundle: Ports, name: str = "handbook", docs: dict[str, str] | None = None, ws: str = WS) -> str:
    deps = ingest_deps(bundle)
    principal = Principal(id="seed", workspaces=(ws,), scopes=("api:write",))
    kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId=ws, name=name), principal, deps)
    for doc_name, content in (DOCS if docs is None else docs).items():
        ingest.add_document(kb.id, AddDocumentRequest(workspaceId=ws, name=doc_name, content=content), principal,
                            deps)
    return kb.id


@pytest.fixture()
def kb_id(bundle: Ports) -> str:
    return make_kb(bundle)


def request_body(kb: str | None = None, *, max_tokens: int = 2000, reserved: int = 0, task: str | None = None,
                 items: list[dict[str, Any]] | None = None, ws: str = WS, run: str | None = None,
                 attempt: str | None = None, **scope: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "runId": run or str(uuid.uuid4()), "attemptId": attempt or str(uuid.uuid4()),
        "scope": {"workspaceId": ws, "maxClassification": "confidential", **scope},
        "budget": {"maxTokens": max_tokens, "reservedForOutput": reserved},
    }
    if task is not None:
        body["task"] = task
    if items is not None:
        body["items"] = items
    if kb is not None:
        body["sources"] = {"knowledge": {"knowledgeBaseIds": [kb], "query": "failed payments retried"}}
    return body


def inline(content: str, cls: str = "documents", *, trust: str = "user", classification: str = "internal",
           source: str = "note-1", revision: str = "r1", **extra: Any) -> dict[str, Any]:
    return {"class": cls, "content": content, "trustTier": trust, "classification": classification,
            "sourceId": source, "sourceRevision": revision, **extra}
