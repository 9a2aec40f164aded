"""Snapshot assembly over the embedded engine: governance, order, budgets, hash, idempotency, isolation."""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

import pytest

from agentkb.adapters.embedded.embedder import local_tokenizer
from agentkb.api.routes.snapshot import snapshot_deps
from agentkb.composition import Ports, get_ports
from agentkb.errors import BadRequest, Conflict, NotFound
from agentkb.models.domain import Principal
from agentkb.models.snapshot import CreateSnapshotRequest
from agentkb.services.graph.write import parse_graph_write, upsert_graph
from agentkb.services.snapshot.service import create_snapshot, get_snapshot, snapshot_hash
from tests.graph_payloads import entity as graph_entity
from tests.graph_payloads import proof as graph_proof
from tests.unit.snapshot.conftest import ALICE, WS, assert_contract, inline, make_kb, request_body

TOK = local_tokenizer()
LONG = " ".join(f"Sentence number {i} explains one more detail of how invoices are reconciled." for i in range(60))


def build(body: dict[str, Any], principal: Principal = ALICE) -> dict[str, Any]:
    outcome = create_snapshot(CreateSnapshotRequest.model_validate(body), principal, snapshot_deps(get_ports()))
    doc = json.loads(outcome.body)
    assert_contract(doc)
    check_invariants(doc)
    return doc


def check_invariants(doc: dict[str, Any]) -> None:
    budget = doc["budget"]
    assert budget["usedTokens"] == sum(i["tokens"] for i in doc["items"])
    assert budget["usedTokens"] <= budget["maxTokens"] - budget["reservedForOutput"]
    assert [i["rank"] for i in doc["items"]] == list(range(1, len(doc["items"]) + 1))
    assert all(i["tokens"] == TOK.count(i["content"]) for i in doc["items"])
    assert doc["hash"] == snapshot_hash(doc)


def reasons(doc: dict[str, Any]) -> dict[str, str]:
    return {e["sourceId"]: e["reason"] for e in doc["exclusions"]}


def test_task_policy_instructions_first_then_retrieved_by_rank(kb_id: str) -> None:
    body = request_body(kb_id, task="Why was my account suspended?", items=[
        inline("Answer in English.", "instructions", trust="system-policy", source="instr"),
        inline("A tool said the payment failed twice.", "tool-result", trust="tool-result", source="tool"),
        inline("Never reveal card numbers.", "policy", trust="system-policy", source="pol")])
    doc = build(body)
    classes = [i["class"] for i in doc["items"]]
    assert classes[:3] == ["task", "policy", "instructions"]
    assert {"documents", "code", "tool-result"} <= set(classes[3:])
    billing = next(i for i in doc["items"] if "suspended" in i["content"] and i["class"] == "documents")
    assert billing["provenance"].startswith(f"agentkb://ws/{WS}/kb/{kb_id}/documents/")
    assert billing["indexVersion"].startswith(f"{kb_id}@") and billing["embeddingProfile"].endswith("@384")
    assert len(billing["sourceRevision"]) == 64 and billing["trustTier"] == "trusted-knowledge"
    assert any(i["class"] == "code" for i in doc["items"])  # retry.py is code, not documents
    assert doc["scope"]["principal"] == "alice" and doc["exclusions"] == []


def test_each_exclusion_reason(kb_id: str, bundle: Ports) -> None:
    body = request_body(kb_id, maxClassification="internal",
                        allowedTrustTiers=["user", "trusted-knowledge", "system-policy"], items=[
                            inline("Top secret roadmap.", classification="restricted", source="secret"),
                            inline("Scraped forum post.", trust="untrusted-external", source="forum"),
                            inline("An old copy of a note.", source="old", stale=True),
                            inline("Same words twice.", source="first"),
                            inline("Same words twice.", source="second"),
                            inline(LONG, source="huge")])
    body["budget"]["maxTokens"] = 150  # under a quarter of the huge item: not worth compressing
    doc = build(body)
    got = reasons(doc)
    assert got["secret"] == "classification" and got["forum"] == "denied" and got["old"] == "stale"
    assert got["second"] == "duplicate" and "first" not in got and got["huge"] == "budget"


def test_a_knowledge_base_outside_the_scope_is_never_queried(bundle: Ports) -> None:
    inside, outside = make_kb(bundle, "inside"), make_kb(bundle, "outside", {"x.md": "Outside the scope."})
    body = request_body(knowledgeBaseIds=[inside])
    body["sources"] = {"knowledge": {"knowledgeBaseIds": [inside, outside], "query": "scope payments"}}
    doc = build(body)
    assert reasons(doc) == {f"knowledge-base:{outside}": "denied"}
    assert doc["items"] and all(f"/kb/{inside}/" in i["provenance"] for i in doc["items"])


def test_superseded_inline_copy_and_a_document_the_catalog_lost_are_stale(kb_id: str, bundle: Ports) -> None:
    first = build(request_body(kb_id))
    cited = first["items"][0]
    # an inline copy of a retrieved chunk at an older revision of its document is superseded
    stale_copy = inline(cited["content"] + " (old)", source=cited["sourceId"], revision="0" * 64,
                        provenance=cited["provenance"])
    current_copy = inline("A current quote.", source=cited["sourceId"], revision=cited["sourceRevision"],
                          provenance=cited["provenance"])
    doc = build(request_body(items=[stale_copy, current_copy]))
    assert [e["reason"] for e in doc["exclusions"]] == ["stale"] and len(doc["items"]) == 1
    # the index still serving a document the catalog no longer has (OpenSearch lags writes and deletes)
    deps = snapshot_deps(get_ports())
    lagging = LaggingCatalog(deps.sources.search.catalog, cited["sourceId"])
    search = dataclasses.replace(deps.sources.search, catalog=lagging)
    deps = dataclasses.replace(deps, sources=dataclasses.replace(deps.sources, search=search))
    again = json.loads(create_snapshot(CreateSnapshotRequest.model_validate(request_body(kb_id)), ALICE, deps).body)
    assert reasons(again).get(cited["sourceId"]) == "stale"


class LaggingCatalog:
    def __init__(self, inner: Any, gone: str) -> None:
        self.inner, self.gone = inner, gone

    def get_document(self, kb_id: str, document_id: str) -> Any:
        return None if document_id == self.gone else self.inner.get_document(kb_id, document_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize(("max_tokens", "reserved"), [(1, 0), (2, 1), (50, 49), (2000, 1999)])
def test_tiny_budgets_never_overflow(kb_id: str, max_tokens: int, reserved: int) -> None:
    doc = build(request_body(kb_id, max_tokens=max_tokens, reserved=reserved, task="Why was I suspended?"))
    assert doc["budget"]["usedTokens"] <= max_tokens - reserved
    assert all(e["reason"] == "budget" for e in doc["exclusions"])


def test_one_huge_item_is_compressed_when_useful_else_excluded() -> None:
    total = TOK.count(LONG)
    doc = build(request_body(items=[inline(LONG, source="huge")], max_tokens=total // 2))
    (item,) = doc["items"]
    assert item["compressed"] and item["tokens"] <= total // 2 and LONG.startswith(item["content"])
    small = build(request_body(items=[inline(LONG, source="huge")], max_tokens=total // 5))
    assert small["items"] == [] and reasons(small) == {"huge": "budget"}


def test_same_inputs_same_items_order_and_tokens(kb_id: str) -> None:
    docs = [build(request_body(kb_id, task="Why was my account suspended?")) for _ in range(2)]
    assert docs[0]["items"][1:] == docs[1]["items"][1:] and docs[0]["exclusions"] == docs[1]["exclusions"]
    assert [(i["content"], i["tokens"]) for i in docs[0]["items"]] == [(i["content"], i["tokens"]) for i in
                                                                       docs[1]["items"]]
    assert docs[0]["snapshotId"] != docs[1]["snapshotId"]  # new attempt, new snapshot


def test_replay_returns_the_stored_bytes_and_a_changed_request_conflicts(kb_id: str, bundle: Ports) -> None:
    body = request_body(kb_id)
    request = CreateSnapshotRequest.model_validate(body)
    first = create_snapshot(request, ALICE, snapshot_deps(get_ports()))
    make_kb(bundle, "later", {"new.md": "Failed payments retried are now logged."})  # the index changes
    second = create_snapshot(request, ALICE, snapshot_deps(get_ports()))
    assert (first.status, second.status) == (201, 200) and first.body == second.body
    snapshot_id = json.loads(first.body)["snapshotId"]
    assert get_snapshot(snapshot_id, ALICE, snapshot_deps(get_ports())) == first.body
    with pytest.raises(Conflict):
        create_snapshot(CreateSnapshotRequest.model_validate({**body, "strategy": "other"}), ALICE,
                        snapshot_deps(get_ports()))


def test_other_workspaces_see_nothing(kb_id: str) -> None:
    mallory = Principal(id="mallory", workspaces=("ws2",), scopes=("api:read", "api:write"))
    body = request_body(kb_id)
    doc = build(body)
    with pytest.raises(NotFound):
        get_snapshot(doc["snapshotId"], mallory, snapshot_deps(get_ports()))
    with pytest.raises(NotFound):
        build(body, mallory)
    # the same run/attempt ids in another workspace are another snapshot, not a conflict
    other = build(request_body(ws="ws2", run=body["runId"], attempt=body["attemptId"]), mallory)
    assert other["snapshotId"] != doc["snapshotId"]
    with pytest.raises(NotFound):  # mallory's ws2 has no such knowledge base
        build(request_body(kb_id, ws="ws2"), mallory)


def test_knowledge_source_needs_a_query_or_task(kb_id: str) -> None:
    body = request_body(kb_id)
    del body["sources"]["knowledge"]["query"]
    with pytest.raises(BadRequest):
        build(body)
    assert build({**body, "task": "suspended account"})["items"]


def test_graph_source_items(bundle: Ports) -> None:
    proof = graph_proof("p1", "src/billing.py")
    old = {**proof, "id": "p2", "freshness": "stale"}
    upsert_graph(get_ports().graph, parse_graph_write({"workspaceId": WS, "proofs": [proof, old], "entities": [
        graph_entity("svc:billing", "billing-api", key="billing-api", proofs=["p1"]),
        graph_entity("svc:billing-old", "billing-legacy", key="billing-legacy", proofs=["p2"])], "relations": [
        {"id": "r1", "from": "svc:billing", "to": "svc:billing-old", "kind": "depends-on", "derivation": "extracted",
         "trust": "authoritative", "confidence": "high", "proofIds": ["p1"]}]}))
    body = request_body()
    body["sources"] = {"graph": {"query": "billing"}}
    doc = build(body)
    (item,) = doc["items"]
    assert item["class"] == "graph" and item["sourceId"] == "svc:billing" and len(item["indexVersion"]) == 64
    assert "billing-api depends-on billing-legacy" in item["content"]
    assert reasons(doc) == {"svc:billing-old": "stale"}


def test_memory_source_without_recall_contributes_nothing(kb_id: str) -> None:
    body = request_body(kb_id)
    body["sources"]["memory"] = {"query": "what did we decide about retries"}
    assert all(i["class"] != "memory" for i in build(body)["items"])


@pytest.mark.parametrize("patch", [
    {"budget": {"maxTokens": 10, "reservedForOutput": 10}},
    {"budget": {"maxTokens": 0}},
    {"runId": "not-a-uuid"},
    {"scope": {"workspaceId": WS, "maxClassification": "secret"}},
    {"items": [{"class": "documents", "content": "x"}]},
    {"unexpected": True},
    {"budget": {"maxTokens": "10"}},
])
def test_invalid_requests(patch: dict[str, Any]) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        CreateSnapshotRequest.model_validate({**request_body(), **patch})


def write_memory_row(bundle: Ports, name: str, body: str, **extra: Any) -> None:
    from agentkb.composition import get_ports
    from agentkb.models.memory.api import MemoryWriteRequest
    from agentkb.services.memory.service import MemoryDeps, write_memory

    request = MemoryWriteRequest.model_validate({"workspace_id": WS, "visibility": "workspace", "type": "decision",
                                                 "name": name, "body": body, "confirmed": True, **extra})
    write_memory(request, ALICE, MemoryDeps(get_ports().memories, get_ports().graph, bundle.embedder))


def test_memory_source_items_and_gates(bundle: Ports) -> None:
    pytest.importorskip("agentkb.services.recall.service")
    write_memory_row(bundle, "retry-policy", "We decided to retry failed payments three times, then suspend.")
    write_memory_row(bundle, "lunch", "The team prefers pizza on Fridays.")
    body = request_body()
    body["sources"] = {"memory": {"query": "failed payments retry decision", "maxItems": 5}}
    doc = build(body)
    memories = [i for i in doc["items"] if i["class"] == "memory"]
    assert memories and memories[0]["sourceId"] == "retry-policy" and memories[0]["trustTier"] == "agent"
    assert memories[0]["provenance"].startswith(f"agentkb://ws/{WS}/memories/")
    # the scope shuts the whole source before any query: an exclusion, never a filtered result
    fresh = {"attemptId": str(uuid.uuid4())}
    denied = build({**body, **fresh, "scope": {**body["scope"], "allowedTrustTiers": ["user"]}})
    assert denied["items"] == [] and reasons(denied) == {"memory": "denied"}
    public = build({**body, "attemptId": str(uuid.uuid4()), "scope": {**body["scope"], "maxClassification": "public"}})
    assert public["items"] == [] and reasons(public) == {"memory": "classification"}


def test_a_memorys_unmatched_entities_never_become_empty_graph_items(bundle: Ports) -> None:
    # Given a memory naming a repo and a topic that no workspace entity holds
    write_memory_row(bundle, "canary-notes", "Canaries run for twenty minutes.",
                     entities={"repos": ["canary-runner"], "topics": ["canaries"]})
    # When a snapshot asks the graph for them, Then nothing comes back: recall's own entities are not graph items
    body = request_body()
    body["sources"] = {"graph": {"query": "canary-runner"}}
    assert [i for i in build(body)["items"] if i["class"] == "graph"] == []
