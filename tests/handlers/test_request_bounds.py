"""Every request array, string and open map has a bound, published in /openapi.json and refused with a 400 before
any work: a recall naming 200,000 entities (2 MB) used to take 9 s of server time."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from agentkb.composition import Ports
from agentkb.config import MAX_BODY_BYTES
from agentkb.local.lambda_context import LocalLambdaContext
from agentkb.models.bounds import MAX_ENTITIES_PER_KIND, MAX_OPEN_KINDS, MAX_QUERY_CHARS, MAX_TAG_NAME
from tests.helpers import body_of, rest_event
from tests.reliability.make_events import RECALL

OPEN_TEXT_BOUNDS = ("maxLength", "enum", "const", "pattern")


def _call(function: str, method: str, path: str, body: Any = None, key: str | None = None,
          raw_body: str | None = None) -> tuple[int, Any]:
    handler = importlib.import_module(f"{function}.handler").lambda_handler
    response = handler(rest_event(method, path, body, key=key, raw_body=raw_body), LocalLambdaContext())
    return response["statusCode"], body_of(response)


def _unbounded(schema: Any, where: str, components: dict[str, Any], seen: frozenset[str]) -> list[str]:
    """Every array without maxItems, open string without a bound and open map without maxProperties in `schema`."""
    if not isinstance(schema, dict):
        return []
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return [] if name in seen else _unbounded(components[name], name, components, seen | {name})
    found = []
    kind = schema.get("type")
    if kind == "array" and "maxItems" not in schema:
        found.append(f"{where}: array without maxItems")
    if kind == "string" and not any(bound in schema for bound in OPEN_TEXT_BOUNDS):
        found.append(f"{where}: string without maxLength")
    extra = schema.get("additionalProperties")
    if kind == "object" and extra not in (None, False) and "maxProperties" not in schema:
        found.append(f"{where}: open object without maxProperties")
    parts = [(f"{where}.{name}", sub) for name, sub in (schema.get("properties") or {}).items()]
    parts += [(where, sub) for key in ("anyOf", "oneOf", "allOf") for sub in schema.get(key, [])]
    parts += [(f"{where}[]", schema.get("items")), (f"{where}.*", extra), (f"{where} key", schema.get("propertyNames"))]
    for inner_where, sub in parts:
        found += _unbounded(sub, inner_where, components, seen)
    return found


def test_no_operation_of_the_openapi_document_accepts_an_unbounded_request(bundle: Ports) -> None:
    status, document = _call("search", "GET", "/openapi.json")
    assert status == 200
    components = document["components"]["schemas"]
    found, bodies = [], 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters") or []:
                if parameter["in"] == "query":
                    found += _unbounded(parameter["schema"], f"{method} {path} ?{parameter['name']}", components,
                                        frozenset())
            for content in (operation.get("requestBody") or {}).get("content", {}).values():
                bodies += 1
                found += _unbounded(content["schema"], f"{method} {path} body", components, frozenset())
    assert bodies >= 12  # every write and search body was walked
    assert found == [], found


def test_the_walk_finds_an_unbounded_array_string_and_map() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}},
                                               "m": {"type": "object", "additionalProperties": True}}}
    assert sorted(_unbounded(schema, "x", {}, frozenset())) == [
        "x.a: array without maxItems", "x.a[]: string without maxLength", "x.m: open object without maxProperties"]


def _many_entities(count: int) -> dict[str, list[str]]:
    kinds = ("people", "orgs", "repos", "files", "customers", "topics")
    return {kind: [f"{kind[0]}{n}" for n in range(i, count, len(kinds))] for i, kind in enumerate(kinds)}


class NoWork:
    """An embedder that fails the test if a request gets as far as embedding anything."""

    model_id, dimension = "no-work", 384

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("the request reached the service")

    embed_documents = embed_query


def test_a_recall_naming_200000_entities_is_refused_before_any_work(rw_key: str, override_ports: Any) -> None:
    override_ports(embedder=NoWork())
    raw = json.dumps({**RECALL, "workspace_id": "ws1", "entities": _many_entities(200_000)})
    assert len(raw.encode()) < MAX_BODY_BYTES  # under the body limit: the model's bound refuses it, not the 413
    status, out = _call("recall", "POST", "/v1/recall", key=rw_key, raw_body=raw)
    assert status == 400 and out["error"]["code"] == "BAD_REQUEST"
    assert {issue["path"] for issue in out["error"]["details"]} >= {"entities.people", "entities.topics"}


@pytest.mark.parametrize(("function", "path", "body", "issue"), [
    ("recall", "/v1/recall", {**RECALL, "workspace_id": "ws1",
                              "entities": {"repos": ["r"] * (MAX_ENTITIES_PER_KIND + 1)}}, "entities.repos"),
    ("recall", "/v1/recall", {**RECALL, "workspace_id": "ws1", "query": "q" * (MAX_QUERY_CHARS + 1)}, "query"),
    ("recall", "/v1/recall", {**RECALL, "workspace_id": "ws1", "task_id": "t" * 257}, "task_id"),
    ("search", "/api/v2/knowledge/search", {"workspaceId": "ws1", "knowledgeBaseIds": ["k" * 129], "query": "q"},
     "knowledgeBaseIds.0"),
    ("search", "/api/v2/knowledge/search", {"workspaceId": "ws1", "knowledgeBaseIds": ["kb"], "query": "q",
                                            "tagFilters": [{"tagName": "t" * (MAX_TAG_NAME + 1), "value": "v"}]},
     "tagFilters.0.tagName"),
    ("ingest", "/ob1/recall", {"schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": "ws1",
                               "query": "q", "entities": {f"k{n}": [] for n in range(MAX_OPEN_KINDS + 1)}},
     "entities"),
    ("ingest", "/v1/memories", {"workspace_id": "ws1", "visibility": "workspace", "type": "note", "name": "n",
                                "body": "b", "valid_until": "2026-01-01T00:00:00." + "0" * 100 + "Z"}, "valid_until"),
])
def test_each_bound_is_a_400_naming_the_field(rw_key: str, override_ports: Any, function: str, path: str,
                                              body: dict[str, Any], issue: str) -> None:
    override_ports(embedder=NoWork())
    status, out = _call(function, "POST", path, body, key=rw_key)
    assert status == 400, out
    assert issue in {detail["path"] for detail in out["error"]["details"]}, out


def test_a_document_with_more_tags_than_a_knowledge_base_can_define_is_a_400(rw_key: str) -> None:
    status, kb = _call("ingest", "POST", "/api/v2/knowledge/bases", {"workspaceId": "ws1", "name": "kb"}, rw_key)
    assert status == 201, kb
    tags = {f"t{n}": "v" for n in range(18)}
    status, out = _call("ingest", "POST", f"/api/v2/knowledge/bases/{kb['data']['id']}/documents",
                        {"workspaceId": "ws1", "name": "d", "content": "text", "tags": tags}, rw_key)
    assert status == 400 and out["error"]["details"][0]["path"] == "tags", out
