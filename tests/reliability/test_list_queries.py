"""The list routes' query strings: /openapi.json and the behaviour agree (issue 18's fuzz-reach finding).

Outside /ob1 an empty query value is a 400 and the document says `minLength: 1`; on /ob1 it is no value, as on OB1's
own server (`if (project_id)`), and `workspace_id` of the two OB1 lists is required (OB1 answers 400 without it).
No query parameter has a null branch (a query string cannot carry null: a generator sent the text "null"). A cursor
is base64url as issued; anything else is a 400 BAD_REQUEST, which the document says.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkb.api.openapi_params import query_schema
from agentkb.api.routers import openapi_document
from agentkb.composition import Ports
from tests.helpers import http_event, invoke, mint, rest_event
from tests.list_query_flows import flow_list_query_strings


def _query_parameters() -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, parameter) for path, item in openapi_document()["paths"].items()
            for method, operation in item.items() if isinstance(operation, dict)
            for parameter in operation.get("parameters") or [] if parameter["in"] == "query"]


def _call(key: str, method: str, path: str, query: dict[str, str], *, v2: bool = False) -> tuple[int, Any]:
    event = (http_event if v2 else rest_event)(method, path, key=key, query=query)
    response = invoke("ingest", event)
    return response["statusCode"], json.loads(response["body"] or "null")


def _seed_memory(key: str) -> str:
    status, body = _call_body(key, {"workspace_id": "ws1", "visibility": "workspace", "type": "decision",
                                    "name": "deploy-day", "body": "The billing deploy goes out on Fridays."})
    assert status == 201, body
    return str(body["memory_id"])


def _call_body(key: str, body: dict[str, Any]) -> tuple[int, Any]:
    response = invoke("ingest", rest_event("POST", "/v1/memories", body, key=key))
    return response["statusCode"], json.loads(response["body"])


def test_no_query_parameter_is_documented_as_null() -> None:
    for method, path, parameter in _query_parameters():
        assert {"type": "null"} not in parameter["schema"].get("anyOf", []), (method, path, parameter["name"])
        assert parameter["schema"].get("default", "") is not None, (method, path, parameter["name"])


def test_outside_ob1_every_open_text_parameter_says_it_cannot_be_empty() -> None:
    checked = 0
    for method, path, parameter in _query_parameters():
        schema = parameter["schema"]
        if schema.get("type") != "string" or "enum" in schema or "const" in schema:
            continue
        if path.startswith("/ob1/"):
            assert parameter["name"] == "workspace_id" or not schema.get("minLength"), (path, parameter["name"])
        else:
            assert schema.get("minLength", 0) >= 1, (method, path, parameter["name"])
            checked += 1
    assert checked >= 10  # workspace ids, /v1/memories filters, both cursors


@pytest.mark.parametrize("path", ["/ob1/memories", "/ob1/memories/review"])
def test_the_ob1_lists_document_workspace_id_as_required(path: str) -> None:
    parameters = {p["name"]: p for p in openapi_document()["paths"][path]["get"]["parameters"]}
    assert parameters["workspace_id"]["required"] is True
    assert parameters["workspace_id"]["schema"]["minLength"] == 1
    assert "400" in openapi_document()["paths"][path]["get"]["responses"]


def test_every_cursor_is_documented_with_its_pattern_and_its_400() -> None:
    cursors = [(method, path, p) for method, path, p in _query_parameters() if p["name"] == "cursor"]
    assert {path for _, path, _ in cursors} >= {"/v1/memories", "/api/v2/knowledge/bases"}
    for method, path, parameter in cursors:
        assert parameter["schema"]["pattern"] == "^[A-Za-z0-9_-]+={0,2}$"
        assert "400 BAD_REQUEST" in parameter["schema"]["description"]
        assert "400" in openapi_document()["paths"][path][method.lower()]["responses"]


def test_query_schema_keeps_the_outer_annotations_and_other_branches() -> None:
    optional = {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}], "title": "T", "default": None}
    assert query_schema(optional, empty_refused=True) == {"type": "string", "maxLength": 5, "title": "T",
                                                          "minLength": 1}
    assert query_schema(optional, empty_refused=False) == {"type": "string", "maxLength": 5, "title": "T"}
    union = {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
    assert query_schema(union, empty_refused=True) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


def test_an_empty_value_outside_ob1_is_the_documented_400(rw_key: str) -> None:
    status, body = _call(rw_key, "GET", "/v1/memories", {"workspace_id": "ws1", "project_id": ""})
    assert status == 400 and body["error"]["code"] == "BAD_REQUEST"
    assert body["error"]["details"] == [{"path": "query.project_id", "message": "omit the parameter instead"}]


@pytest.mark.parametrize("v2", [False, True])
def test_an_empty_ob1_filter_is_no_filter_as_on_ob1s_server(rw_key: str, v2: bool) -> None:
    memory_id = _seed_memory(rw_key)
    plain = _call(rw_key, "GET", "/ob1/memories", {"workspace_id": "ws1"}, v2=v2)
    empty = _call(rw_key, "GET", "/ob1/memories", {"workspace_id": "ws1", "project_id": "", "memory_type": "",
                                                   "task_id_prefix": "", "limit": ""}, v2=v2)
    assert plain[0] == 200 and [m["memory_id"] for m in plain[1]["memories"]] == [memory_id]
    assert empty == plain
    review = _call(rw_key, "GET", "/ob1/memories/review", {"workspace_id": "ws1", "project_id": ""}, v2=v2)
    assert review == (200, _call(rw_key, "GET", "/ob1/memories/review", {"workspace_id": "ws1"}, v2=v2)[1])


@pytest.mark.parametrize("path", ["/ob1/memories", "/ob1/memories/review"])
@pytest.mark.parametrize("query", [{}, {"workspace_id": ""}, {"project_id": "p"}])
def test_an_ob1_list_without_a_workspace_is_a_400_as_documented(rw_key: str, path: str,
                                                                 query: dict[str, str]) -> None:
    status, body = _call(rw_key, "GET", path, query)
    assert status == 400 and body["error"]["code"] == "BAD_REQUEST"
    assert [d["path"] for d in body["error"]["details"]] == ["query.workspace_id"]


@pytest.mark.parametrize("cursor", ["bm90LWEtY3Vyc29y", "!!", "bTox", "bTp4"])  # "not-a-cursor", -, "m:1", "m:x"
def test_a_made_up_memory_cursor_is_a_400_and_a_real_one_pages(rw_key: str, cursor: str) -> None:
    for name in ("first", "second"):
        assert _call_body(rw_key, {"workspace_id": "ws1", "visibility": "workspace", "type": "note", "name": name,
                                   "body": f"{name} note"})[0] == 201
    status, page = _call(rw_key, "GET", "/v1/memories", {"workspace_id": "ws1", "limit": "1"})
    assert status == 200 and page["nextCursor"]
    status, second = _call(rw_key, "GET", "/v1/memories", {"workspace_id": "ws1", "cursor": page["nextCursor"]})
    assert status == 200 and len(second["data"]) == 1
    status, body = _call(rw_key, "GET", "/v1/memories", {"workspace_id": "ws1", "cursor": cursor})
    if cursor == "bTox":  # a well-formed cursor is a position, whatever made it
        assert status == 200
    else:
        assert status == 400 and body["error"]["code"] == "BAD_REQUEST", body


def test_the_shared_flow_on_the_embedded_engine(bundle: Ports) -> None:
    flow_list_query_strings(lambda workspaces, scopes, principal: mint(bundle, workspaces, scopes, principal))
