"""The MCP tools: each one is an agentkb route, its request model, and the fields the tool fills in for an agent."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel

from agentkb.mcp.calls import ApiRequest
from agentkb.mcp.schemas import coerce_integers, fill_defaults, make_optional, model_input_schema
from agentkb.models.graph.api import GraphSearchRequest
from agentkb.models.memory.api import MemoryWriteRequest
from agentkb.models.recall.api import RecallRequest
from agentkb.models.search import KnowledgeSearchRequest
from agentkb.models.snapshot import CreateSnapshotRequest

WORKSPACE_NOTE = "Optional when the API key reaches exactly one workspace (that one is used)."


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    method: str
    path: str
    read_only: bool
    workspace_path: tuple[str, ...]
    model: type[BaseModel] | None = None
    descriptions: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Fields filled with a fresh value when omitted (ids of a new run), with the note shown in the schema.
    generated: Mapping[str, tuple[Callable[[], Any], str]] = field(default_factory=dict)
    query_schema: Mapping[str, Any] | None = None  # GET tools: the query parameters' schema
    kb_paths: tuple[tuple[str, ...], ...] = ()  # knowledge base references, by id or name (see kb_names)

    def input_schema(self) -> dict[str, Any]:
        if self.model is not None:
            schema = model_input_schema(self.model, descriptions=self.descriptions, defaults=self.defaults)
        else:
            schema = {"type": "object", "properties": dict(self.query_schema or {}), "additionalProperties": False}
        make_optional(schema, self.workspace_path, WORKSPACE_NOTE)
        for name, (_, note) in self.generated.items():
            make_optional(schema, (name,), note)
        return schema

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The input schema, built once, for reading arguments by (never handed out: see input_schema)."""
        return self.input_schema()

    def request(self, arguments: Mapping[str, Any], workspace: str | None) -> ApiRequest:
        """The API request for these arguments: clean integer strings as integers (clients such as the MCP
        inspector's CLI may send any argument as a string), defaults, generated ids and the implied workspace."""
        args = fill_defaults(coerce_integers(dict(arguments), self.schema), self.defaults)
        for name, (make, _) in self.generated.items():
            args.setdefault(name, make())
        if workspace is not None:
            _set_default(args, self.workspace_path, workspace)
        if self.method == "GET":
            return ApiRequest(self.method, self.path, {k: _query_value(v) for k, v in args.items()} or None, None)
        return ApiRequest(self.method, self.path, None, args)


def _set_default(args: dict[str, Any], path: tuple[str, ...], value: str) -> None:
    node = args
    for name in path[:-1]:
        child = node.setdefault(name, {})
        if not isinstance(child, dict):
            return  # a malformed argument: left as given for the API to reject
        node = child
    node.setdefault(path[-1], value)


def _query_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _new_uuid() -> str:
    return str(uuid.uuid4())


SEARCH_KNOWLEDGE = ToolSpec(
    name="search_knowledge", title="Search knowledge",
    description="Hybrid (BM25 + vector, fused by RRF) or vector search over up to 20 knowledge bases (by name or "
                "id), with typed tag filters. Returns ranked document chunks with document name, source and "
                "scores. list_knowledge_bases shows the knowledge bases.",
    method="POST", path="/api/v2/knowledge/search", read_only=True, workspace_path=("workspaceId",),
    model=KnowledgeSearchRequest, kb_paths=(("knowledgeBaseIds",),),
    descriptions={"workspaceId": "Workspace that owns the knowledge bases.",
                  "knowledgeBaseIds": "One knowledge base name or id, or a list of 1..20 names or ids.",
                  "query": "What to search for. Omit for a tag-filter-only search.",
                  "topK": "How many chunks to return (1..100, default 10).",
                  "tagFilters": "Up to 10 tag filters, AND-ed; operators must fit the tag's field type.",
                  "searchMode": "vector or hybrid; omitted = the workspace policy (hybrid).",
                  "rerankerEnabled": "Ask for reranking (reported honestly in rerankerStatus).",
                  "rerankerModel": "Reranker model, when reranking is available.",
                  "rerankerInputCount": "Candidate pool for the reranker (1..100)."},
)

SEARCH_GRAPH = ToolSpec(
    name="search_graph", title="Search the knowledge graph",
    description="Bounded, deterministic search of the workspace knowledge graph (services, APIs, repos, owners, "
                "decisions...). Returns matching entities with their relations and proofs; projection 'agent' "
                "gives a compact, token-budgeted view.",
    method="POST", path="/v1/graph/search", read_only=True, workspace_path=("workspaceId",),
    model=GraphSearchRequest,
    descriptions={"workspaceId": "Workspace whose graph is searched.",
                  "query": "Entity name or words to match (1..512 characters).",
                  "kind": "Only entities of this kind.", "projectId": "Only this project's entities.",
                  "limit": "Maximum entities (1..100, default 12).",
                  "projection": "full (every field) or agent (compact, budgeted)."},
)

RECALL_DEFAULTS: dict[str, Any] = {
    "schema_version": "openbrain.openclaw.recall.v1", "task_type": "general", "entities": {},
    "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
              "include_stale": False},
    "limits": {"max_items": 10, "max_tokens": 2000},
    "sensitivity": {"contains_code": False, "contains_customer_data": False, "contains_private_meeting_data": False},
}

RECALL = ToolSpec(
    name="recall", title="Recall agent memory",
    description="Recall what agents learned before: exact vector matches over eligible memories plus 2-hop graph "
                "matches, under a hard token budget. Only query is needed; scope, limits and sensitivity have "
                "safe defaults (workspace visibility, confirmed and fresh memories only, 10 items, 2000 tokens).",
    method="POST", path="/v1/recall", read_only=True, workspace_path=("workspace_id",), model=RecallRequest,
    defaults=RECALL_DEFAULTS,
    descriptions={"workspace_id": "Workspace whose memories are recalled.", "query": "What to recall.",
                  "project_id": "Project context (project memories need it).",
                  "task_type": "The kind of task the memories are for.",
                  "entities": "Named people, orgs, repos, files, customers, topics: seeds of the graph leg.",
                  "scope": "Audience and eligibility: visibility, project_only, include_unconfirmed, include_stale.",
                  "limits": "max_items (1..50), max_tokens (100..20000), recency_days.",
                  "sensitivity": "What the answer may contain (code, customer data, private meeting data).",
                  "schema_version": "The recall request version (filled in).", "channel": "Channel context.",
                  "task_id": "Caller's task id.", "flow_id": "Caller's flow id.", "runtime": "Calling runtime.",
                  "model_intent": "Model the recall is for."},
)

CREATE_SNAPSHOT = ToolSpec(
    name="create_snapshot", title="Create a context snapshot",
    description="Assemble the governed, token-budgeted bundle of context for one agent attempt: the task, inline "
                "items, then knowledge, memory and graph candidates by fused rank, with exclusions and reasons "
                "and a verifiable hash. The same runId + attemptId returns the stored snapshot.",
    method="POST", path="/v1/snapshots", read_only=False, workspace_path=("scope", "workspaceId"),
    model=CreateSnapshotRequest, kb_paths=(("scope", "knowledgeBaseIds"), ("sources", "knowledge", "knowledgeBaseIds")),
    generated={"runId": (_new_uuid, "A new UUID when omitted."),
               "attemptId": (_new_uuid, "A new UUID when omitted.")},
    descriptions={"runId": "UUID of the agent run.", "attemptId": "UUID of this attempt of the run.",
                  "stepId": "UUID of the step, if any.", "strategy": "Free-form strategy label.",
                  "scope": "Workspace, knowledge bases and the highest classification the attempt may see.",
                  "scope.workspaceId": "Workspace the snapshot is built in.",
                  "scope.knowledgeBaseIds": "Knowledge bases (names or ids) the attempt may see.",
                  "sources.knowledge.knowledgeBaseIds": "Knowledge bases (names or ids) to retrieve from.",
                  "budget": "maxTokens for the whole bundle, reservedForOutput kept free.",
                  "task": "The task the attempt works on (always first in the bundle).",
                  "items": "Inline items handed over verbatim, each with class, trust tier and classification.",
                  "sources": "Where to retrieve candidates from: knowledge, memory, graph."},
)

WRITE_MEMORY = ToolSpec(
    name="write_memory", title="Write a memory",
    description="Store what an agent learned (decision, incident, note...) so a later recall finds it; entities "
                "and relations join the shared knowledge graph. A name that exists gets a new revision; "
                "idempotency_key makes retries safe. Secrets (keys, tokens) are refused.",
    method="POST", path="/v1/memories", read_only=False, workspace_path=("workspace_id",),
    model=MemoryWriteRequest, defaults={"visibility": "workspace"},
    descriptions={"workspace_id": "Workspace the memory belongs to.", "name": "Stable name of the memory.",
                  "body": "The memory itself (up to 64 KiB).", "type": "What kind of memory it is.",
                  "visibility": "Who may recall it (default workspace).", "project_id": "Project it belongs to.",
                  "owner_id": "Leave out: a personal memory is the caller's (another principal's id is refused).",
                  "channel_id": "Channel of a channel memory.",
                  "description": "One-line summary.", "entities": "Named entities it is about.",
                  "relations": "Weighted relations between entities.", "confirmed": "Confirmed by a person.",
                  "stale": "Known to be out of date.", "valid_until": "ISO 8601 date after which it expires.",
                  "sensitivity": "What it contains (code, customer data, private meeting data).",
                  "source": "Where it came from.", "idempotency_key": "Same key + same body = stored once."},
)

LIST_KNOWLEDGE_BASES = ToolSpec(
    name="list_knowledge_bases", title="List knowledge bases",
    description="The knowledge bases of a workspace, with their names and ids (search_knowledge and "
                "create_snapshot take either), embedding model and tag definitions.",
    method="GET", path="/api/v2/knowledge/bases", read_only=True, workspace_path=("workspaceId",),
    query_schema={
        "workspaceId": {"type": "string", "minLength": 1, "maxLength": 128, "description": "Workspace to list."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50, "description": "Page size."},
        "cursor": {"type": "string", "minLength": 1, "maxLength": 2048,
                   "description": "nextCursor of the previous page (opaque)."}},
)

TOOLS: tuple[ToolSpec, ...] = (SEARCH_KNOWLEDGE, SEARCH_GRAPH, RECALL, CREATE_SNAPSHOT, WRITE_MEMORY,
                               LIST_KNOWLEDGE_BASES)
BY_NAME = {tool.name: tool for tool in TOOLS}
