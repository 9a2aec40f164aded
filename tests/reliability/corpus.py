"""Shared pieces of the reliability suite: the seeded workspace, replaying events, schema validators."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from agentkb.api.routes_table import BY_OPERATION, RouteSpec, match_route
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.domain import EmbeddingProfile, KnowledgeBase
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.services import ingest
from agentkb.services.tag_filters import assign_slots
from tests.helpers import ROOT, body_of, invoke, mint, rest_event
from tests.reliability.make_events import (
    DIRECT_REQ,
    GRAPH_WRITE,
    MEMORY,
    SEED_IDEMPOTENCY,
    SNAPSHOT_BODY,
    WS,
    direct,
)
from tests.upstream import OursAndUpstream, ours_and_upstream

EVENTS = ROOT / "events"
KB = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
WORKSPACES = [WS, "demo", "ws1"]  # the fixed ids of events/search+ingest, events/graph+recall+memories, snapshot
PLACEHOLDER_SCOPES = {"akb_test_replay_key": ["api:read", "api:write"], "akb_test_readonly_key": ["api:read"]}
DEMO_GRAPH = json.loads((ROOT / "functions/agentkb/local/demo/graph.json").read_text())


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
    docs = [("reset.md", "To reset your password, open Settings and choose Security.", {"category": "account"}),
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
    recalled = replay(direct("ob1Recall", ob1_recall))  # the direct principal's own trace, for its trace events
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


@cache
def _registry() -> Registry:
    resources = []
    for path in sorted((ROOT / "schemas").glob("*.json")):
        schema = json.loads(path.read_text())
        resources.append((schema.get("$id", path.name), Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def schema_validator(name: str) -> OursAndUpstream:
    """Our schemas/ file (its $refs through schemas/) and the upstream document it implements."""
    return ours_and_upstream(name, _registry())


@cache
def _openapi() -> dict[str, Any]:
    from agentkb.api.routers import openapi_document

    return openapi_document()


def openapi_response_errors(route: RouteSpec, status: int, body: Any) -> list[str]:
    """Why `body` does not match what /openapi.json declares for this route and status ([] when it does)."""
    operation = _openapi()["paths"][route.path][route.method.lower()]
    declared = operation["responses"].get(str(status))
    if declared is None:
        return [f"status {status} is not declared for {route.operation_id}"]
    schema = (declared.get("content") or {}).get("application/json", {}).get("schema")
    if schema is None:
        return [] if body in (None, "") else [f"{route.operation_id} {status} declares no body"]
    registry = Registry().with_resource("urn:agentkb:openapi", Resource.from_contents(
        {**_openapi(), "$schema": "https://json-schema.org/draft/2020-12/schema"}))
    validator = Draft202012Validator({"$ref": "urn:agentkb:openapi#" + _pointer(route, status)}, registry=registry)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(body)][:5]


def _pointer(route: RouteSpec, status: int) -> str:
    path = route.path.replace("~", "~0").replace("/", "~1")
    return f"/paths/{path}/{route.method.lower()}/responses/{status}/content/application~1json/schema"
