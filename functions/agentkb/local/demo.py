"""`make run`'s setup: demo workspace, knowledge base, dev key, corpus, graph; then the curls to try."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agentkb.composition import Ports
from agentkb.errors import Unauthorized
from agentkb.local.operator import create_kb, ingest_paths
from agentkb.services.access.api_keys import authenticate, create_api_key

DEMO_DIR = Path(__file__).resolve().parent / "demo"
WORKSPACE = "demo"
KB_NAME = "handbook"
TAGS = ["category:text", "audience:text", "version:number", "updated:date"]


def dev_key(ports: Ports) -> str:
    """The demo's dev key, kept (0600) in the data dir so a second `make run` reuses it."""
    path = Path(ports.settings.data_dir) / "dev-key"
    if path.exists():
        key = path.read_text(encoding="utf-8").strip()
        try:
            authenticate(ports.keys, ports.secrets, key)
            return key
        except Unauthorized:
            pass
    key, _ = create_api_key(ports.keys, ports.secrets, [WORKSPACE], ["api:read", "api:write"], "dev")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(key + "\n")
    return key


def setup(ports: Ports) -> dict[str, Any]:
    """Idempotent: reuses the KB, skips unchanged documents, re-upserts the same graph."""
    kb = ports.catalog.find_knowledge_base_by_name(WORKSPACE, KB_NAME) or create_kb(
        ports, WORKSPACE, KB_NAME, "The demo company handbook", TAGS)
    # replace: the demo KB is the shipped corpus's own (older data dirs hold its documents without a source path)
    summary = ingest_paths(ports, WORKSPACE, kb.id, [DEMO_DIR / "docs"], progress=False, replace=True)
    graph = _import_graph(ports)
    memories = _write_memories(ports)
    return {"kb": kb, "key": dev_key(ports), "documents": summary, "graph": graph, "memories": memories}


def _import_graph(ports: Ports) -> dict[str, Any]:
    from agentkb.services.graph.write import parse_graph_write, upsert_graph

    payload = json.loads((DEMO_DIR / "graph.json").read_text(encoding="utf-8"))
    payload["workspaceId"] = WORKSPACE
    return upsert_graph(ports.graph, parse_graph_write(payload)).data.model_dump()


def _write_memories(ports: Ports) -> int:
    from agentkb.local.demo_memories import write_demo_memories

    return write_demo_memories(ports, WORKSPACE, DEMO_DIR / "memories.json")


def curls(base: str, kb_id: str) -> list[tuple[str, str]]:
    """(title, curl) for each route, ready to paste after `export AGENTKB_KEY=...`."""
    def post(path: str, body: dict[str, Any]) -> str:
        return (f"curl -s -X POST {base}{path} -H \"X-API-Key: $AGENTKB_KEY\" -H 'Content-Type: application/json' "
                f"-d '{json.dumps(body)}'")

    def ob1(path: str, body: dict[str, Any]) -> str:
        return (f"curl -s -X POST {base}{path} -H \"x-brain-key: $AGENTKB_KEY\" -H 'Content-Type: application/json' "
                f"-d '{json.dumps(body)}'")

    return [
        ("Knowledge search (hybrid)", post("/api/v2/knowledge/search", {
            "workspaceId": WORKSPACE, "knowledgeBaseIds": [kb_id], "query": "How do I reset my password?",
            "topK": 3})),
        ("Search with a tag filter", post("/api/v2/knowledge/search", {
            "workspaceId": WORKSPACE, "knowledgeBaseIds": kb_id, "query": "when are failed payments retried",
            "tagFilters": [{"tagName": "category", "operator": "eq", "value": "billing"}]})),
        ("List tags", f"curl -s '{base}/api/v2/knowledge/bases/{kb_id}/tags?workspaceId={WORKSPACE}' "
                      "-H \"X-API-Key: $AGENTKB_KEY\""),
        ("Graph search (full)", post("/v1/graph/search", {"workspaceId": WORKSPACE, "query": "billing-api"})),
        ("Graph search (agent projection)", post("/v1/graph/search", {
            "workspaceId": WORKSPACE, "query": "billing-api", "projection": "agent", "limit": 3})),
        ("Write a memory", post("/v1/memories", {
            "workspace_id": WORKSPACE, "visibility": "workspace", "type": "decision", "name": "canary-policy",
            "body": "billing-api deploys canary at 5% for 20 minutes before full rollout.", "confirmed": True,
            "entities": {"repos": ["billing-api"], "topics": ["deploys"]}})),
        ("Recall", post("/v1/recall", {
            "schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WORKSPACE, "task_type": "general",
            "query": "how does billing-api deploy?", "entities": {"repos": ["billing-api"]},
            "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
                      "include_stale": False},
            "limits": {"max_items": 5, "max_tokens": 1000},
            "sensitivity": {"contains_code": False, "contains_customer_data": False,
                            "contains_private_meeting_data": False}})),
        ("OB1 recall (OB1's clients: endpoint <base>/ob1, key in x-brain-key; docs/ob1.md)", ob1(
            "/ob1/recall", {"schema_version": "openbrain.agent_memory.recall.v1", "workspace_id": WORKSPACE,
                            "query": "how does billing-api deploy?", "runtime": {"name": "hermes"}})),
        ("Context snapshot", post("/v1/snapshots", {
            "runId": "3f2b8c1e-0d4a-4e6b-9a7c-5d1e2f3a4b5c", "attemptId": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
            "scope": {"workspaceId": WORKSPACE, "knowledgeBaseIds": [kb_id], "maxClassification": "internal"},
            "budget": {"maxTokens": 2000, "reservedForOutput": 500},
            "task": "Answer a customer asking how to reset their password.",
            "sources": {"knowledge": {"knowledgeBaseIds": [kb_id], "query": "reset password", "topK": 5},
                        "graph": {"query": "billing-api"}}})),
    ]


def run_demo(ports: Ports, host: str, port: int) -> None:
    state = setup(ports)
    base = f"http://{host}:{port}"
    docs = state["documents"]
    print(f"\nagentkb demo ready - workspace '{WORKSPACE}', knowledge base '{KB_NAME}' ({state['kb'].id}), "
          f"{docs['created'] + docs['updated'] + docs['unchanged']} documents ({docs['created']} new,"
          f" {docs['unchanged']} unchanged)"
          + (f", graph {state['graph']['entities']} entities" if state["graph"] else "")
          + (f", {state['memories']} memories" if state["memories"] else ""))
    print("\nIn another terminal, once the server below says it is serving:\n")
    print(f"  export AGENTKB_KEY={state['key']}\n")
    for title, command in curls(base, state["kb"].id):
        print(f"# {title}\n{command}\n")
    print(f"# Health and the OpenAPI document (no key)\ncurl -s {base}/health\n"
          f"curl -s {base}/openapi.json | head -c 300\n")
    print(f"# The console for people, in a browser: {base}/console/ (workspace '{WORKSPACE}', the key above)\n")
    _print_mcp(ports, state["key"])


def _print_mcp(ports: Ports, key: str) -> None:
    """The MCP client configurations beside the curls (see docs/mcp.md); nothing when the SDK is absent."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:  # the SDK comes with the local extra (make install)
        return
    from agentkb.mcp.snippets import client_configs

    print("# Use from an agent (MCP): `agentkb mcp` on stdio, see docs/mcp.md")
    for title, text in client_configs(Path(ports.settings.data_dir), key):
        print(f"# {title}\n{text}\n")
