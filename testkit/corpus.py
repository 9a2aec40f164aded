"""The workspace the recorded events (events/**) expect, seeded through the real handlers in this process, and
what their placeholders stand for. The reliability, handler and contract suites replay the events against it, and
bench/coldstart/record.py records a cold start's AWS calls against it; tests/reliability/make_events.py writes the
events from the same bodies."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from agentkb.api.routes_table import BY_OPERATION, RouteSpec, match_route
from agentkb.local.events import body_of, rest_event
from agentkb.local.lambda_context import LocalLambdaContext
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.domain import EmbeddingProfile, KnowledgeBase
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.services.access.api_keys import create_api_key
from agentkb.services.ingest import service as ingest
from agentkb.services.search.tag_filters import assign_slots

ROOT = Path(__file__).resolve().parents[1]
DIRECT_PRINCIPAL = "orchestrator"  # the principal of the recorded direct invocations
DIRECT_REQ = "__OB1_DIRECT_REQUEST__"  # the seeded OB1 recall of the direct principal: a trace is its recaller's alone
WS, KB = "a91c4b2e-6d3f-4e8a-b5c7-0d9e2f1a8c64", "7c9e6679-7425-40de-944b-e07fc1f90ae7"
RUN, ATTEMPT = "3b7f0c2e-1d4a-4c5b-9e6f-7a8b9c0d1e2f", "5c6d7e8f-9a0b-4c1d-8e2f-3a4b5c6d7e8f"
SEED_IDEMPOTENCY = "reliability-seed-1"
GRAPH_WRITE = {"workspaceId": WS, "entities": [
    {"id": "svc:vpn", "kind": "service", "label": "vpn-gateway", "identity": {
        "key": "services/vpn", "scope": "workspace", "aliases": [],
        "fingerprint": "5d0a4e1a9c1ab7a3c5f3b0a3b94d3e0f64a6f2b4f8b2e6a1d7c0f9e8d3b2a1c0"},
     "attributes": {}, "proofIds": []}], "relations": [], "proofs": []}
MEMORY: dict[str, Any] = {"workspace_id": WS, "project_id": "billing", "visibility": "workspace", "type": "decision",
          "name": "vpn-rollout", "body": "The VPN rollout finishes on Friday; the IT team owns the client config.",
          "entities": {"people": [], "orgs": ["IT Team"], "repos": [], "files": [], "customers": [], "topics": ["vpn"]},
          "confirmed": True}
SNAPSHOT_BODY = {"runId": RUN, "attemptId": ATTEMPT, "strategy": "default",
                 "scope": {"workspaceId": WS, "maxClassification": "internal",
                           "allowedTrustTiers": ["system-policy", "user", "trusted-knowledge", "tool-result"]},
                 "budget": {"maxTokens": 512, "reservedForOutput": 128}, "task": "How do I reset my password?",
                 "items": [{"class": "policy", "content": "Never reveal passwords.", "trustTier": "system-policy",
                            "classification": "internal", "sourceId": "policy-pw", "sourceRevision": "v1"}],
                 "sources": {"knowledge": {"knowledgeBaseIds": [KB], "query": "reset password", "topK": 3}}}
EVENTS = ROOT / "events"
WORKSPACES = [WS, "demo", "ws1"]  # the fixed ids of events/search+ingest, events/graph+recall+memories, snapshot
PLACEHOLDER_SCOPES = {"akb_test_replay_key": ["api:read", "api:write"], "akb_test_readonly_key": ["api:read"],
                      "akb_test_admin_key": ["api:admin"]}  # operator routes (forget a principal)
DEMO_GRAPH = json.loads((ROOT / "functions/agentkb/local/demo/graph.json").read_text())



def mint(container: Any, workspaces: list[str], scopes: list[str], principal: str | None = None) -> str:
    key, _ = create_api_key(container.keys, container.secrets, workspaces, scopes, principal)
    return key


def handler(function: str) -> Any:
    return importlib.import_module(f"{function}.handler").lambda_handler


def invoke(function: str, event: dict[str, Any]) -> dict[str, Any]:
    """Call the real lambda_handler of functions/<function>/handler.py."""
    return handler(function)(event, LocalLambdaContext(function_name=f"agentkb-{function}"))  # type: ignore[no-any-return]


def route_of(event: dict[str, Any]) -> RouteSpec | None:
    """The route an event targets, whatever its shape (REST v1, HTTP v2, direct)."""
    if "operation" in event and "requestContext" not in event:
        return BY_OPERATION.get(str(event["operation"]))
    if event.get("version") == "2.0":
        found = match_route(event["requestContext"]["http"]["method"], event["rawPath"])
    else:
        found = match_route(event["httpMethod"], event["path"])
    return found[0] if found else None


def function_of(event: dict[str, Any]) -> str:
    route = route_of(event)
    return route.function if route else "search"  # the search function answers unknown routes, as the gateway does


def replay(event: dict[str, Any]) -> dict[str, Any]:
    return invoke(function_of(event), event)


def seed(container: Any, *, snapshot: bool = False, ws1_kb: bool = False) -> dict[str, str]:
    """Everything any recorded event expects to exist; returns placeholder -> value."""
    values = {name: mint(container, WORKSPACES, scopes, name.removeprefix("akb_test_"))
              for name, scopes in PLACEHOLDER_SCOPES.items()}
    profile = EmbeddingProfile(container.embedder.model_id, container.embedder.dimension)
    container.catalog.create_knowledge_base(KnowledgeBase(
        KB, WS, "handbook", None, profile, assign_slots([("category", "text"), ("version", "number")]),
        "2026-01-01T00:00:00Z"))
    docs: list[tuple[str, str, dict[str, Any]]] = [
        ("reset.md", "To reset your password, open Settings and choose Security.", {"category": "account"}),
            ("billing.md", "Failed payments are retried after 3, 5 and 7 days.", {"category": "billing", "version": 2})]
    ids = [ingest.add_document(KB, AddDocumentRequest(workspaceId=WS, name=n, content=c, tags=t), OPERATOR,
                               deps(container)).id for n, c, t in docs]
    values["__DOC_ID__"] = ids[0]
    rw = values["akb_test_replay_key"]
    for workspace in ("demo", WS):
        graph = {**DEMO_GRAPH, "workspaceId": workspace}
        assert replay(rest_event("POST", "/v1/graph", graph, key=rw))["statusCode"] == 200
    assert replay(rest_event("POST", "/v1/graph", GRAPH_WRITE, key=rw))["statusCode"] == 200
    memory = {**MEMORY, "name": "billing-deploys", "idempotency_key": SEED_IDEMPOTENCY,
              "body": "Billing deploys go through the CDK pipeline; the payments team owns the billing-api rollback.",
              "entities": {**MEMORY["entities"], "repos": ["billing-api"]}}
    written = replay(rest_event("POST", "/v1/memories", memory, key=rw))
    assert written["statusCode"] == 201, body_of(written)
    values["__MEMORY_ID__"] = str(body_of(written)["memory_id"])
    ob1_recall = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "query": "billing deploys",
                  "scope": {"project_only": False}}
    recalled = replay(rest_event("POST", "/ob1/recall", ob1_recall, key=rw))
    assert recalled["statusCode"] == 200, body_of(recalled)
    values["__OB1_REQUEST__"] = body_of(recalled)["request_id"]
    direct = {"operation": "ob1Recall", "body": ob1_recall,
              "principal": {"id": DIRECT_PRINCIPAL, "workspaces": [WS], "scopes": ["api:read", "api:write"]}}
    recalled = replay(direct)  # the direct principal's own trace, for its trace events (a trace is its recaller's)
    assert recalled["statusCode"] == 200, body_of(recalled)
    values[DIRECT_REQ] = body_of(recalled)["request_id"]
    if snapshot:
        built = replay(rest_event("POST", "/v1/snapshots", SNAPSHOT_BODY, key=rw))
        assert built["statusCode"] == 201, body_of(built)
    if ws1_kb:
        kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId="ws1", name="kb"), OPERATOR,
                                          deps(container))
        ingest.add_document(kb.id, AddDocumentRequest(
            workspaceId="ws1", name="billing.md", content="Failed payments are retried three times before the "
            "account is suspended."), OPERATOR, deps(container))
        values["__KB_ID__"] = kb.id
    return values


def load(path: Path, values: dict[str, str]) -> Any:
    text = path.read_text()  # a fresh copy per test: shared files are never mutated
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return json.loads(text)
