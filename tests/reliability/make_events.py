"""Writes the reliability_* recorded events: every route x {REST v1, HTTP v2, direct} x its documented statuses.

Run `python -m tests.reliability.make_events` from the repository root after a route changes;
tests/reliability/test_event_corpus.py replays every events/**/*.json. Cases a folder owner's own replay test
cannot take (it swaps the REST key header, so HTTP v2 and direct shapes would break it, or it lacks the
seed a case needs) live in events/reliability/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from testkit.corpus import (
    ATTEMPT,
    DIRECT_PRINCIPAL,
    DIRECT_REQ,
    GRAPH_WRITE,
    KB,
    MEMORY,
    RUN,
    SEED_IDEMPOTENCY,
    SNAPSHOT_BODY,
    WS,
)
from tests.helpers import http_event, rest_event

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
RW, RO, BAD = "akb_test_replay_key", "akb_test_readonly_key", "akb_0000000000000000_notarealsecret"
ADMIN = "akb_test_admin_key"
DOC = "__DOC_ID__"  # the seeded reset.md document (ids are random uuid4s)
MID, REQ = "__MEMORY_ID__", "__OB1_REQUEST__"  # the seeded memory and the seeded OB1 recall (tests/reliability/corpus)
ERROR = "error.schema.json"

KB_BODY = {"workspaceId": WS, "name": "runbooks-reliability",
           "tagDefinitions": [{"tagName": "team", "fieldType": "text"}]}
DOC_BODY = {"workspaceId": WS, "name": "vpn.md", "content": "Connect to the VPN with the corporate client.",
            "tags": {"category": "it"}}
SEARCH_BODY = {"workspaceId": WS, "knowledgeBaseIds": [KB], "query": "reset password", "topK": 2}
GRAPH_SEARCH = {"workspaceId": WS, "query": "billing-api", "limit": 5}
RECALL = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "project_id": "billing",
          "task_type": "code_review", "query": "how does billing deploy", "entities": {"repos": ["billing-api"]},
          "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
                    "include_stale": False},
          "limits": {"max_items": 5, "max_tokens": 2000, "recency_days": 30},
          "sensitivity": {"contains_code": False, "contains_customer_data": False,
                          "contains_private_meeting_data": False},
          "channel": {"kind": "slack", "id": "C123", "thread_id": None}, "runtime": {"name": "openclaw",
                                                                                    "version": "1.4.0"}}


def _snapshot_id() -> str:
    from agentkb.services.snapshot.service import snapshot_id_for

    return snapshot_id_for(WS, RUN, ATTEMPT)


def _other(body: dict[str, Any], field: str = "workspaceId") -> dict[str, Any]:
    return {**body, field: "not-your-workspace"}


def _scrub(event: dict[str, Any]) -> dict[str, Any]:
    if "requestContext" in event and "http" not in event["requestContext"]:
        event["requestContext"].update({"accountId": "123456789012", "apiId": "abcdef1234"})
    elif "requestContext" in event:
        event["requestContext"].update({"accountId": "123456789012", "apiId": "abcdef1234",
                                        "domainName": "abcdef1234.execute-api.us-east-1.amazonaws.com"})
    return event


def rest(method: str, path: str, resource: str, body: Any = None, key: str | None = RW,
         query: dict[str, str] | None = None, params: dict[str, str] | None = None,
         headers: dict[str, str] | None = None) -> dict[str, Any]:
    event = rest_event(method, path, body, key=key, query=query, resource=resource, headers=headers)
    event["pathParameters"] = params
    return _scrub(event)


def v2(method: str, path: str, resource: str, body: Any = None, key: str | None = RW,
       query: dict[str, str] | None = None, params: dict[str, str] | None = None,
       headers: dict[str, str] | None = None) -> dict[str, Any]:
    event = http_event(method, path, body, key=key, query=query, headers=headers)
    event["routeKey"] = event["requestContext"]["routeKey"] = f"{method} {resource}"
    if params:
        event["pathParameters"] = params
    return _scrub(event)


def direct(operation: str, body: Any = None, scopes: tuple[str, ...] | None = ("api:read", "api:write"),
           params: dict[str, str] | None = None, query: dict[str, str] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {"operation": operation}
    if scopes is not None:
        event["principal"] = {"id": DIRECT_PRINCIPAL, "workspaces": [WS], "scopes": list(scopes)}
    if body is not None:
        event["body"] = body
    if params:
        event["pathParameters"] = params
    if query:
        event["queryStringParameters"] = query
    return event


def route_cases() -> dict[str, list[tuple[str, dict[str, Any], int, str | None]]]:
    """folder -> [(case, event, status, schema)]."""
    snap = _snapshot_id()
    search, ingest, reli = [], [], []
    gss = "workspace-knowledge-search.v1.schema.json"
    ks, gs = "/api/v2/knowledge/search", "/v1/graph/search"
    search += [
        ("health_v2", v2("GET", "/health", "/health", key=None), 200, None),
        ("health_direct", direct("health", scopes=None), 200, None),
        ("openapi_rest", rest("GET", "/openapi.json", "/openapi.json", key=None), 200, None),
        ("openapi_v2", v2("GET", "/openapi.json", "/openapi.json", key=None), 200, None),
        ("openapi_direct", direct("openapi", scopes=None), 200, None),
        ("unknown_route", rest("GET", "/v1/nope", "/v1/nope"), 404, ERROR),
        ("unknown_operation_direct", direct("noSuchOperation", {}), 400, ERROR),
        ("search_bad_key", rest("POST", ks, ks, SEARCH_BODY, key=BAD), 401, ERROR),
        ("search_no_scope_direct", direct("searchKnowledge", SEARCH_BODY, scopes=("api:write",)), 403, ERROR),
        ("search_other_workspace_direct", direct("searchKnowledge", _other(SEARCH_BODY)), 404, ERROR),
        ("search_bad_request_v2", v2("POST", ks, ks, {**SEARCH_BODY, "topK": 0}), 400, ERROR),
        ("search_bad_request_direct", direct("searchKnowledge", {**SEARCH_BODY, "topK": 0}), 400, ERROR),
        ("graph_search_bad_request", rest("POST", gs, gs, {**GRAPH_SEARCH, "limit": 0}), 400, ERROR),
        ("graph_search_missing_key", rest("POST", gs, gs, GRAPH_SEARCH, key=None), 401, ERROR),
        ("graph_search_no_scope_direct", direct("searchGraph", GRAPH_SEARCH, scopes=("api:write",)), 403, ERROR),
        ("graph_search_other_workspace", rest("POST", gs, gs, _other(GRAPH_SEARCH)), 404, ERROR),
        ("graph_search_text_plain", rest("POST", gs, gs, GRAPH_SEARCH, headers={"Content-Type": "text/plain"}),
         415, ERROR),
    ]
    bases, tags = "/api/v2/knowledge/bases", f"/api/v2/knowledge/bases/{KB}/tags"
    tags_res, docs = "/api/v2/knowledge/bases/{knowledgeBaseId}/tags", f"/api/v2/knowledge/bases/{KB}/documents"
    docs_res = "/api/v2/knowledge/bases/{knowledgeBaseId}/documents"
    kbp, wsq = {"knowledgeBaseId": KB}, {"workspaceId": WS}
    mem, graph = "/v1/memories", "/v1/graph"
    ingest += [
        ("create_kb_v2", v2("POST", bases, bases, KB_BODY), 201, None),
        ("create_kb_direct", direct("createKnowledgeBase", KB_BODY), 201, None),
        ("create_kb_bad_request", rest("POST", bases, bases, {**KB_BODY, "name": ""}), 400, ERROR),
        ("create_kb_missing_key", rest("POST", bases, bases, KB_BODY, key=None), 401, ERROR),
        ("create_kb_other_workspace", rest("POST", bases, bases, _other(KB_BODY)), 404, ERROR),
        ("create_kb_duplicate_name", rest("POST", bases, bases, {**KB_BODY, "name": "handbook"}), 409, ERROR),
        ("create_kb_text_plain", rest("POST", bases, bases, KB_BODY, headers={"Content-Type": "text/plain"}),
         415, ERROR),
        ("list_tags_v2", v2("GET", tags, tags_res, key=RO, query=wsq, params=kbp), 200, None),
        ("list_tags_direct", direct("listTags", scopes=("api:read",), params=kbp, query=wsq), 200, None),
        ("list_tags_no_workspace", rest("GET", tags, tags_res, params=kbp), 400, ERROR),
        ("list_tags_bad_key", rest("GET", tags, tags_res, key=BAD, query=wsq, params=kbp), 401, ERROR),
        ("list_tags_no_scope_direct", direct("listTags", scopes=("api:write",), params=kbp, query=wsq), 403, ERROR),
        ("list_tags_unknown_kb", rest("GET", f"{bases}/nope/tags", tags_res, query=wsq,
                                      params={"knowledgeBaseId": "nope"}), 404, ERROR),
        ("add_document_v2", v2("POST", docs, docs_res, DOC_BODY, params=kbp), 201, None),
        ("add_document_direct", direct("addDocument", DOC_BODY, params=kbp), 201, None),
        ("add_document_missing_content", rest("POST", docs, docs_res, {k: v for k, v in DOC_BODY.items()
                                                                        if k != "content"}, params=kbp), 400, ERROR),
        ("add_document_missing_key", rest("POST", docs, docs_res, DOC_BODY, key=None, params=kbp), 401, ERROR),
        ("add_document_read_only", rest("POST", docs, docs_res, DOC_BODY, key=RO, params=kbp), 403, ERROR),
        ("add_document_unknown_kb", rest("POST", f"{bases}/nope/documents", docs_res, DOC_BODY,
                                         params={"knowledgeBaseId": "nope"}), 404, ERROR),
        ("add_document_text_plain", rest("POST", docs, docs_res, DOC_BODY, params=kbp,
                                         headers={"Content-Type": "text/plain"}), 415, ERROR),
        ("delete_document_missing_key", rest("DELETE", f"{docs}/nope", docs_res + "/{documentId}", key=None,
                                             query=wsq, params={**kbp, "documentId": "nope"}), 401, ERROR),
        ("delete_document_read_only", rest("DELETE", f"{docs}/nope", docs_res + "/{documentId}", key=RO,
                                           query=wsq, params={**kbp, "documentId": "nope"}), 403, ERROR),
        ("delete_document_no_workspace", rest("DELETE", f"{docs}/nope", docs_res + "/{documentId}",
                                              params={**kbp, "documentId": "nope"}), 400, ERROR),
        ("write_memory_rest", rest("POST", mem, mem, MEMORY), 201, None),
        ("write_memory_v2", v2("POST", mem, mem, MEMORY), 201, None),
        ("write_memory_direct", direct("writeMemory", MEMORY), 201, None),
        ("write_memory_bad_request", rest("POST", mem, mem, {**MEMORY, "visibility": "everyone"}), 400, ERROR),
        ("write_memory_missing_key", rest("POST", mem, mem, MEMORY, key=None), 401, ERROR),
        ("write_memory_read_only", rest("POST", mem, mem, MEMORY, key=RO), 403, ERROR),
        ("write_memory_other_workspace", rest("POST", mem, mem, _other(MEMORY, "workspace_id")), 404, ERROR),
        ("write_memory_text_plain", rest("POST", mem, mem, MEMORY, headers={"Content-Type": "text/plain"}),
         415, ERROR),
        ("write_memory_secret", rest("POST", mem, mem, {**MEMORY, "body": "deploy key AKIAIOSFODNN7EXAMPLE"}),
         422, ERROR),
        ("upsert_graph_rest", rest("POST", graph, graph, GRAPH_WRITE), 200, None),
        ("upsert_graph_v2", v2("POST", graph, graph, GRAPH_WRITE), 200, None),
        ("upsert_graph_direct", direct("upsertGraph", GRAPH_WRITE), 200, None),
        ("upsert_graph_bad_request", rest("POST", graph, graph, {**GRAPH_WRITE, "entities": "x"}), 400, ERROR),
        ("upsert_graph_missing_key", rest("POST", graph, graph, GRAPH_WRITE, key=None), 401, ERROR),
        ("upsert_graph_read_only", rest("POST", graph, graph, GRAPH_WRITE, key=RO), 403, ERROR),
        ("upsert_graph_other_workspace", rest("POST", graph, graph, _other(GRAPH_WRITE)), 404, ERROR),
        ("upsert_graph_text_plain", rest("POST", graph, graph, GRAPH_WRITE, headers={"Content-Type": "text/plain"}),
         415, ERROR),
    ]
    rc, sn, one = "/v1/recall", "/v1/snapshots", f"/v1/snapshots/{snap}"
    one_res, sp = "/v1/snapshots/{snapshotId}", {"snapshotId": snap}
    fresh = {**SNAPSHOT_BODY, "runId": "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"}
    rsch, csch = "recall-response.schema.json", "context-snapshot.schema.json"
    reli += [
        ("reliability_graph_search_rest", rest("POST", gs, gs, GRAPH_SEARCH), 200, gss),
        ("reliability_graph_search_v2", v2("POST", gs, gs, GRAPH_SEARCH), 200, gss),
        ("reliability_graph_search_direct", direct("searchGraph", GRAPH_SEARCH, scopes=("api:read",)), 200, gss),
        ("reliability_delete_document_rest", rest("DELETE", f"{docs}/{DOC}", docs_res + "/{documentId}", query=wsq,
                                                  params={**kbp, "documentId": DOC}), 204, None),
        ("reliability_delete_document_v2", v2("DELETE", f"{docs}/{DOC}", docs_res + "/{documentId}", query=wsq,
                                              params={**kbp, "documentId": DOC}), 204, None),
        ("reliability_delete_document_direct", direct("deleteDocument", params={**kbp, "documentId": DOC},
                                                      query=wsq), 204, None),
        ("reliability_write_memory_idempotency_conflict",
         rest("POST", mem, mem, {**MEMORY, "body": "A different body.", "idempotency_key": SEED_IDEMPOTENCY}),
         409, ERROR),
        ("reliability_recall_rest", rest("POST", rc, rc, RECALL, key=RO), 200, rsch),
        ("reliability_recall_v2", v2("POST", rc, rc, RECALL), 200, rsch),
        ("reliability_recall_direct", direct("recall", RECALL, scopes=("api:read",)), 200, rsch),
        ("reliability_recall_fts_only_v2", v2("POST", rc, rc, RECALL, query={"fallback": "fts_only"}), 200, rsch),
        ("reliability_recall_bad_request", rest("POST", rc, rc, {**RECALL, "query": 7}), 400, ERROR),
        ("reliability_recall_missing_key", rest("POST", rc, rc, RECALL, key=None), 401, ERROR),
        ("reliability_recall_bad_key_v2", v2("POST", rc, rc, RECALL, key=BAD), 401, ERROR),
        ("reliability_recall_no_scope_direct", direct("recall", RECALL, scopes=("api:write",)), 403, ERROR),
        ("reliability_recall_other_workspace", rest("POST", rc, rc, _other(RECALL, "workspace_id")), 404, ERROR),
        ("reliability_recall_text_plain", rest("POST", rc, rc, RECALL, headers={"Content-Type": "text/plain"}),
         415, ERROR),
        ("reliability_snapshot_create_rest", rest("POST", sn, sn, fresh), 201, csch),
        ("reliability_snapshot_create_v2", v2("POST", sn, sn, fresh), 201, csch),
        ("reliability_snapshot_create_direct", direct("createSnapshot", fresh), 201, csch),
        ("reliability_snapshot_replay", rest("POST", sn, sn, SNAPSHOT_BODY), 200, csch),
        ("reliability_snapshot_conflict", rest("POST", sn, sn, {**SNAPSHOT_BODY, "task": "Something else"}),
         409, ERROR),
        ("reliability_snapshot_bad_request", rest("POST", sn, sn, {**fresh, "budget": {"maxTokens": -1}}), 400, ERROR),
        ("reliability_snapshot_missing_key", rest("POST", sn, sn, fresh, key=None), 401, ERROR),
        ("reliability_snapshot_read_only", rest("POST", sn, sn, fresh, key=RO), 403, ERROR),
        ("reliability_snapshot_other_workspace", rest("POST", sn, sn, {**fresh, "scope": {
            **fresh["scope"], "workspaceId": "not-your-workspace"}}), 404, ERROR),
        ("reliability_snapshot_text_plain", rest("POST", sn, sn, fresh, headers={"Content-Type": "text/plain"}),
         415, ERROR),
        ("reliability_snapshot_get_rest", rest("GET", one, one_res, key=RO, params=sp), 200, csch),
        ("reliability_snapshot_get_v2", v2("GET", one, one_res, params=sp), 200, csch),
        ("reliability_snapshot_get_direct", direct("getSnapshot", scopes=("api:read",), params=sp), 200, csch),
        ("reliability_snapshot_get_bad_key", rest("GET", one, one_res, key=BAD, params=sp), 401, ERROR),
        ("reliability_snapshot_get_no_scope_direct", direct("getSnapshot", scopes=("api:write",), params=sp),
         403, ERROR),
        ("reliability_snapshot_get_malformed_id", rest("GET", "/v1/snapshots/not-a-uuid", one_res,
                                                       params={"snapshotId": "not-a-uuid"}), 404, ERROR),
    ]
    reli += management_cases() + principal_cases()
    ingest += memory_cases() + ob1_cases() + upload_cases()
    return {"search": [(f"reliability_{c}", e, s, sc) for c, e, s, sc in search],
            "ingest": [(f"reliability_{c}", e, s, sc) for c, e, s, sc in ingest],
            "reliability": reli}


def management_cases() -> list[tuple[str, dict[str, Any], int, str | None]]:
    """Issue 16: list, inspect and delete knowledge bases and documents (every shape, the documented statuses)."""
    bases, one_res = "/api/v2/knowledge/bases", "/api/v2/knowledge/bases/{knowledgeBaseId}"
    one, kbp, wsq = f"{bases}/{KB}", {"knowledgeBaseId": KB}, {"workspaceId": WS}
    docs, docs_res = f"{one}/documents", one_res + "/documents"
    doc, doc_res, docp = f"{docs}/{DOC}", docs_res + "/{documentId}", {**kbp, "documentId": DOC}
    read = ("api:read",)
    cases: list[tuple[str, dict[str, Any], int, str | None]] = []
    for name, path, res, params, method, status, scopes in (
            ("list_kbs", bases, bases, None, "GET", 200, read), ("get_kb", one, one_res, kbp, "GET", 200, read),
            ("list_documents", docs, docs_res, kbp, "GET", 200, read),
            ("get_document", doc, doc_res, docp, "GET", 200, read),
            ("list_document_chunks", f"{doc}/chunks", f"{doc_res}/chunks", docp, "GET", 200, read),
            ("delete_kb", one, one_res, kbp, "DELETE", 204, ("api:write",))):
        operation = {"list_kbs": "listKnowledgeBases", "get_kb": "getKnowledgeBase",
                     "list_documents": "listDocuments",
                     "get_document": "getDocument", "list_document_chunks": "listDocumentChunks",
                     "delete_kb": "deleteKnowledgeBase"}[name]
        key = RO if method == "GET" else RW
        cases += [
            (f"reliability_{name}_rest", rest(method, path, res, key=key, query=wsq, params=params), status, None),
            (f"reliability_{name}_v2", v2(method, path, res, key=key, query=wsq, params=params), status, None),
            (f"reliability_{name}_direct", direct(operation, scopes=scopes, params=params, query=wsq), status, None),
            (f"reliability_{name}_missing_key", rest(method, path, res, key=None, query=wsq, params=params), 401,
             ERROR),
            (f"reliability_{name}_no_workspace", rest(method, path, res, key=key, params=params), 400, ERROR),
            (f"reliability_{name}_other_workspace", rest(method, path, res, key=key, query={"workspaceId": "nope"},
                                                         params=params), 404, ERROR),
        ]
    cases += [
        ("reliability_delete_kb_read_only", rest("DELETE", one, one_res, key=RO, query=wsq, params=kbp), 403, ERROR),
        ("reliability_list_documents_bad_limit", rest("GET", docs, docs_res, key=RO, query={**wsq, "limit": "500"},
                                                      params=kbp), 400, ERROR),
        ("reliability_list_documents_bad_cursor", rest("GET", docs, docs_res, key=RO, query={**wsq, "cursor": "x!"},
                                                       params=kbp), 400, ERROR),
        ("reliability_get_document_unknown", rest("GET", f"{docs}/nope", doc_res, key=RO, query=wsq,
                                                  params={**kbp, "documentId": "nope"}), 404, ERROR),
    ]
    return cases


Case = tuple[str, dict[str, Any], int, str | None]


def upload_cases() -> list[Case]:
    """Issue 28: a file uploaded as base64, extracted on the server (a PDF with a text layer; the refusals)."""
    import base64

    from tests.unit.data_ingest.docfiles import pdf_bytes

    def b64(data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    res, path, kbp = "/api/v2/knowledge/bases/{knowledgeBaseId}/uploads", f"/api/v2/knowledge/bases/{KB}/uploads", {
        "knowledgeBaseId": KB}
    pdf = {"workspaceId": WS, "name": "manuals/vpn.pdf",
           "contentBase64": b64(pdf_bytes(["Connect to the VPN with the corporate client."]))}
    md = {"workspaceId": WS, "name": "wifi.md", "contentBase64": b64(b"# Wi-Fi\n\nJoin the office network.")}
    return [
        ("upload_pdf_rest", rest("POST", path, res, pdf, params=kbp), 201, None),
        ("upload_v2", v2("POST", path, res, md, params=kbp), 201, None),
        ("upload_direct", direct("addDocumentFile", md, params=kbp), 201, None),
        ("upload_bad_base64", rest("POST", path, res, {**md, "contentBase64": "***"}, params=kbp), 400, ERROR),
        ("upload_missing_key", rest("POST", path, res, md, key=None, params=kbp), 401, ERROR),
        ("upload_read_only", rest("POST", path, res, md, key=RO, params=kbp), 403, ERROR),
        ("upload_unknown_kb", rest("POST", "/api/v2/knowledge/bases/nope/uploads", res, md,
                                   params={"knowledgeBaseId": "nope"}), 404, ERROR),
        ("upload_unsupported_format", rest("POST", path, res, {**md, "name": "tool.exe"}, params=kbp), 415, ERROR),
        ("upload_corrupt_pdf", rest("POST", path, res, {**pdf, "contentBase64": b64(b"%PDF-1.4 cut")}, params=kbp),
         422, ERROR),
    ]


def memory_cases() -> list[Case]:
    """The /v1 memory surface beyond writes: list, get, forget."""
    mem, one, one_res = "/v1/memories", f"/v1/memories/{MID}", "/v1/memories/{memoryId}"
    wsq, p = {"workspace_id": WS}, {"memoryId": MID}
    return [
        ("list_memories_rest", rest("GET", mem, mem, key=RO, query=wsq), 200, None),
        ("list_memories_v2", v2("GET", mem, mem, query={**wsq, "limit": "5"}), 200, None),
        ("list_memories_direct", direct("listMemories", scopes=("api:read",), query=wsq), 200, None),
        ("list_memories_no_workspace", rest("GET", mem, mem), 400, ERROR),
        ("list_memories_missing_key", rest("GET", mem, mem, key=None, query=wsq), 401, ERROR),
        ("list_memories_other_workspace", rest("GET", mem, mem, query={"workspace_id": "not-yours"}), 404, ERROR),
        ("get_memory_rest", rest("GET", one, one_res, key=RO, query=wsq, params=p), 200, None),
        ("get_memory_v2", v2("GET", one, one_res, query=wsq, params=p), 200, None),
        ("get_memory_direct", direct("getMemory", scopes=("api:read",), params=p, query=wsq), 200, None),
        ("get_memory_unknown", rest("GET", "/v1/memories/999999", one_res, query=wsq,
                                    params={"memoryId": "999999"}), 404, ERROR),
        ("delete_memory_rest", rest("DELETE", one, one_res, query=wsq, params=p), 204, None),
        ("delete_memory_v2", v2("DELETE", one, one_res, query=wsq, params=p), 204, None),
        ("delete_memory_direct", direct("deleteMemory", params=p, query=wsq), 204, None),
        ("delete_memory_read_only", rest("DELETE", one, one_res, key=RO, query=wsq, params=p), 403, ERROR),
    ]


def principal_cases() -> list[Case]:
    """Issue 25: forget a principal (`api:admin`), every shape; a write key is refused, another workspace is 404."""
    one, one_res = "/v1/principals/readonly_key", "/v1/principals/{principalId}"
    wsq, p = {"workspace_id": WS}, {"principalId": "readonly_key"}
    return [
        ("forget_principal_rest", rest("DELETE", one, one_res, key=ADMIN, query=wsq, params=p), 200, None),
        ("forget_principal_v2", v2("DELETE", one, one_res, key=ADMIN, query=wsq, params=p), 200, None),
        ("forget_principal_direct", direct("forgetPrincipal", scopes=("api:admin",), params=p, query=wsq), 200,
         None),
        ("forget_principal_write_key", rest("DELETE", one, one_res, query=wsq, params=p), 403, ERROR),
        ("forget_principal_other_workspace", rest("DELETE", one, one_res, key=ADMIN, query={
            "workspace_id": "not-yours"}, params=p), 404, ERROR),
        ("forget_principal_no_workspace", rest("DELETE", one, one_res, key=ADMIN, params=p), 400, ERROR),
    ]


def ob1_cases() -> list[Case]:
    """The OB1 Agent Memory API: the key as x-brain-key (REST), ?key= (HTTP API) or a direct principal."""
    brain = {"x-brain-key": RW}
    recall = {"schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": WS, "query": "billing deploys",
              "task_type": "smoke", "runtime": {"name": "hermes"}, "scope": {"include_unconfirmed": True}}
    write = {"schema_version": "openbrain.openclaw.writeback.v1", "workspace_id": WS, "idempotency_key": "rel-1",
             "memory_payload": {"lessons": ["Billing deploys wait for the Tuesday window."]}}
    usage, review = {"used_memory_ids": [MID]}, {"action": "confirm", "notes": "checked"}
    rsch, wsch = "ob1-recall-response.v1.schema.json", "ob1-writeback-response.v1.schema.json"
    wsq, mp, rp = {"workspace_id": WS}, {"memory_id": MID}, {"request_id": REQ}
    cases: list[Case] = []
    for name, op, method, path, resource, body, query, params, status, schema in (
            ("ob1_health", "ob1Health", "GET", "/ob1/health", "/ob1/health", None, None, None, 200, None),
            ("ob1_recall", "ob1Recall", "POST", "/ob1/recall", "/ob1/recall", recall, None, None, 200, rsch),
            ("ob1_writeback", "ob1Writeback", "POST", "/ob1/writeback", "/ob1/writeback", write, None, None, 200,
             wsch),
            ("ob1_usage", "ob1ReportUsage", "POST", f"/ob1/recall/{REQ}/usage", "/ob1/recall/{request_id}/usage",
             usage, None, rp, 200, None),
            ("ob1_list", "ob1ListMemories", "GET", "/ob1/memories", "/ob1/memories", None, wsq, None, 200, None),
            ("ob1_review_queue", "ob1ReviewQueue", "GET", "/ob1/memories/review", "/ob1/memories/review", None,
             wsq, None, 200, None),
            ("ob1_list_by_body", "ob1ListMemoriesByBody", "POST", "/ob1/memories/list", "/ob1/memories/list",
             {**wsq, "limit": 20}, None, None, 200, None),
            ("ob1_review_queue_by_body", "ob1ReviewQueueByBody", "POST", "/ob1/memories/review",
             "/ob1/memories/review", wsq, None, None, 200, None),
            ("ob1_get_memory", "ob1GetMemory", "GET", f"/ob1/memories/{MID}", "/ob1/memories/{memory_id}", None,
             None, mp, 200, None),
            ("ob1_review_memory", "ob1ReviewMemory", "PATCH", f"/ob1/memories/{MID}/review",
             "/ob1/memories/{memory_id}/review", review, None, mp, 200, None),
            ("ob1_trace", "ob1GetRecallTrace", "GET", f"/ob1/recall-traces/{REQ}", "/ob1/recall-traces/{request_id}",
             None, None, rp, 200, None)):
        cases += [(f"{name}_rest", rest(method, path, resource, body, key=None, query=query, params=params,
                                        headers=brain), status, schema),
                  (f"{name}_v2", v2(method, path, resource, body, key=None, query={**(query or {}), "key": RW},
                                    params=params), status, schema),
                  (f"{name}_direct", direct(op, body, params={"request_id": DIRECT_REQ} if params is rp else params,
                                            query=query), status, schema)]
    return cases + [
        ("ob1_health_missing_key", rest("GET", "/ob1/health", "/ob1/health", key=None), 401, ERROR),
        ("ob1_recall_bad_request", rest("POST", "/ob1/recall", "/ob1/recall", {**recall, "query": ""}, key=None,
                                        headers=brain), 400, ERROR),
        ("ob1_recall_other_workspace", rest("POST", "/ob1/recall", "/ob1/recall", _other(recall, "workspace_id"),
                                            key=None, headers=brain), 404, ERROR),
        ("ob1_writeback_read_only", rest("POST", "/ob1/writeback", "/ob1/writeback", write, key=None,
                                         headers={"x-brain-key": RO}), 403, ERROR),
        ("ob1_list_no_workspace", rest("GET", "/ob1/memories", "/ob1/memories", key=None, headers=brain), 400, ERROR),
        ("ob1_get_memory_unknown", rest("GET", "/ob1/memories/999999", "/ob1/memories/{memory_id}", key=None,
                                        params={"memory_id": "999999"}, headers=brain), 404, ERROR),
        ("ob1_review_bad_action", rest("PATCH", f"/ob1/memories/{MID}/review", "/ob1/memories/{memory_id}/review",
                                       {"action": "delete"}, key=None, params=mp, headers=brain), 400, ERROR),
        ("ob1_usage_unknown_trace", rest("POST", "/ob1/recall/nope/usage", "/ob1/recall/{request_id}/usage",
                                         {"used_memory_ids": []}, key=None, params={"request_id": "nope"},
                                         headers=brain), 404, ERROR),
        ("ob1_trace_unknown", rest("GET", "/ob1/recall-traces/nope", "/ob1/recall-traces/{request_id}", key=None,
                                   params={"request_id": "nope"}, headers=brain), 404, ERROR),
    ]


def write() -> int:
    count = 0
    for folder, cases in route_cases().items():
        (EVENTS / folder).mkdir(exist_ok=True)
        for case, event, status, schema in cases:
            (EVENTS / folder / f"{case}.json").write_text(json.dumps(event, indent=2) + "\n")
            (EVENTS / folder / f"{case}.expected.json").write_text(
                json.dumps({"status": status, "schema": schema}, indent=2) + "\n")
            count += 1
    return count


if __name__ == "__main__":
    print(f"{write()} events written")
