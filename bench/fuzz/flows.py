"""What run.py needs besides schemathesis: a seeded workspace and the stateful sequences.

seed(): a second knowledge base with typed tags and documents, memories of every visibility the key can write,
a graph of upstream kinds and snapshots, through the API with the demo key; returns the ids the hooks aim at.
run_sequences(): hypothesis-generated create KB -> add document -> search -> delete document -> search, and
write memory -> recall -> delete memory -> recall (the delete only when GET /openapi.json serves
DELETE /v1/memories/{...}), each step checked for what it must show or must no longer show.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st

WS = "demo"
WORDS = ("invoice", "refund", "deploy", "runbook", "payment", "ledger", "rollout", "billing", "incident", "policy")


class Api:
    """Keep-alive JSON client of the local gateway with the demo key."""

    def __init__(self, server: dict[str, Any]) -> None:
        self.server = server
        self.conn = http.client.HTTPConnection(server["host"], server["port"], timeout=60)

    def __call__(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"X-API-Key": self.server["key"], "Content-Type": "application/json"}
        self.conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = self.conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None


def _created(answer: tuple[int, Any], what: str) -> Any:
    status, body = answer
    if status not in (200, 201):
        raise RuntimeError(f"seeding {what} failed: {status} {json.dumps(body)[:300]}")
    return body


def seed(server: dict[str, Any]) -> dict[str, Any]:
    api = Api(server)
    kb = _created(api("POST", "/api/v2/knowledge/bases", {
        "workspaceId": WS, "name": "fuzz-tagged", "tagDefinitions": [
            {"tagName": "category", "fieldType": "text"}, {"tagName": "year", "fieldType": "number"}]}), "kb")
    kb_id = kb["data"]["id"]
    documents = []
    for i, word in enumerate(WORDS[:4]):
        doc = _created(api("POST", f"/api/v2/knowledge/bases/{kb_id}/documents", {
            "workspaceId": WS, "name": f"fuzz-{word}.md", "tags": {"category": word, "year": 2020 + i},
            "content": f"The {word} runbook: retry failed payments three times, then page the on-call."}), "doc")
        documents.append([kb_id, doc["data"]["id"]])
    memories = []
    for visibility, extra in (("workspace", {}), ("project", {"project_id": "billing"}), ("personal", {})):
        memory = _created(api("POST", "/v1/memories", {
            "workspace_id": WS, "visibility": visibility, "type": "decision", "name": f"fuzz-{visibility}",
            "body": f"The billing deploy ({visibility}) goes out on Fridays after the invoice run.", **extra,
            "entities": {"people": [], "orgs": [], "repos": ["billing-api"], "files": [], "customers": [],
                         "topics": ["deploy"]}}), "memory")
        memories.append(memory["memory_id"])
    _created(api("POST", "/v1/graph", {"workspaceId": WS, "relations": [], "proofs": [], "entities": [
        {"id": f"svc:{name}", "kind": "service", "label": name, "identity": {
            "key": f"services/{name}", "scope": "workspace", "aliases": [],
            "fingerprint": hashlib.sha256(f"service\n\nservices/{name}".encode()).hexdigest()},
         "attributes": {}, "proofIds": []} for name in ("billing-api", "ledger")]}), "graph")
    snapshots = []
    for _ in range(3):
        snap = _created(api("POST", "/v1/snapshots", {
            "runId": str(uuid.uuid4()), "attemptId": str(uuid.uuid4()), "budget": {"maxTokens": 512},
            "scope": {"workspaceId": WS, "maxClassification": "internal"}, "task": "Summarise the billing runbook",
            "sources": {"knowledge": {"knowledgeBaseIds": [kb_id], "query": "billing runbook"}}}), "snapshot")
        snapshots.append(snap["snapshotId"])
    return {"workspace": WS, "knowledgeBases": [server["kb"], kb_id], "documents": documents, "memories": memories,
            "snapshots": snapshots, "cursors": _cursors(api, kb_id)}


def _cursors(api: Api, kb_id: str) -> dict[str, str]:
    """A second-page cursor of each paged list (by path template): a generated cursor is a documented 400."""
    lists = {"/v1/memories": f"/v1/memories?workspace_id={WS}&limit=1",
             "/api/v2/knowledge/bases": f"/api/v2/knowledge/bases?workspaceId={WS}&limit=1",
             "/api/v2/knowledge/bases/{knowledgeBaseId}/documents":
                 f"/api/v2/knowledge/bases/{kb_id}/documents?workspaceId={WS}&limit=1"}
    return {template: _created(api("GET", url), template)["nextCursor"] for template, url in lists.items()}


def _memory_delete_path(openapi: dict[str, Any]) -> str | None:
    """The memory DELETE route, when this build serves one (it lands with another issue)."""
    return next((path for path, item in openapi.get("paths", {}).items()
                 if path.startswith("/v1/memories/{") and "delete" in item), None)


def run_sequences(server: dict[str, Any], openapi: dict[str, Any], examples: int, seed_value: int) -> dict[str, Any]:
    api = Api(server)
    failures: list[str] = []
    delete_memory = _memory_delete_path(openapi)
    counts = {"knowledge": 0, "memory": 0}

    def expect(ok: bool, what: str, answer: Any) -> None:
        if not ok:
            failures.append(f"{what}: {json.dumps(answer)[:300]}")

    @fixed_seed(seed_value)
    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(words=st.lists(st.sampled_from(WORDS), min_size=3, max_size=12), mode=st.sampled_from(["hybrid", "vector"]))
    def knowledge(words: list[str], mode: str) -> None:
        token = f"zq{uuid.uuid4().hex[:10]}"
        status, kb = api("POST", "/api/v2/knowledge/bases", {"workspaceId": WS, "name": f"seq-{token}"})
        expect(status == 201, "create kb", kb)
        kb_id = kb["data"]["id"]
        status, doc = api("POST", f"/api/v2/knowledge/bases/{kb_id}/documents", {
            "workspaceId": WS, "name": f"{token}.md", "content": " ".join([*words, token, *words]) + "."})
        expect(status == 201, "add document", doc)
        search = {"workspaceId": WS, "knowledgeBaseIds": [kb_id], "query": token, "searchMode": mode}
        status, found = api("POST", "/api/v2/knowledge/search", search)
        expect(status == 200 and any(r["documentName"] == f"{token}.md" for r in found["data"]["results"]),
               "search finds the new document", found)
        status, _ = api("DELETE", f"/api/v2/knowledge/bases/{kb_id}/documents/{doc['data']['id']}?workspaceId={WS}")
        expect(status == 204, "delete document", status)
        status, gone = api("POST", "/api/v2/knowledge/search", search)
        expect(status == 200 and token not in json.dumps(gone["data"]["results"]), "search after delete", gone)
        counts["knowledge"] += 1

    @fixed_seed(seed_value)
    @settings(max_examples=examples, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(words=st.lists(st.sampled_from(WORDS), min_size=3, max_size=12),
           visibility=st.sampled_from(["workspace", "personal"]))
    def memory(words: list[str], visibility: str) -> None:
        token = f"zq{uuid.uuid4().hex[:10]}"
        status, written = api("POST", "/v1/memories", {"workspace_id": WS, "visibility": visibility, "type": "note",
                                                        "name": token, "body": " ".join([*words, token]) + "."})
        expect(status == 201, "write memory", written)
        recall = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "task_type": "code_review",
                  "query": f"{token} {' '.join(words)}", "entities": {},
                  "scope": {"visibility": "personal", "project_only": False, "include_unconfirmed": True,
                            "include_stale": False}, "limits": {"max_items": 20, "max_tokens": 4000},
                  "sensitivity": {"contains_code": False, "contains_customer_data": False,
                                  "contains_private_meeting_data": False}}
        status, found = api("POST", "/v1/recall", recall)
        expect(status == 200 and token in json.dumps(found), "recall finds the new memory", found)
        if delete_memory:
            path = delete_memory.split("{")[0] + f"{written['memory_id']}?workspace_id={WS}"
            status, _ = api("DELETE", path)
            expect(status == 204, "delete memory", status)
            status, gone = api("POST", "/v1/recall", recall)
            expect(status == 200 and token not in json.dumps({k: v for k, v in gone.items() if k != "query"}),
                   "recall after delete", gone)
        counts["memory"] += 1

    knowledge()
    memory()
    return {"sequences": counts, "memoryDeleteRoute": delete_memory, "failures": failures}
