"""The MCP tools: each one is an agentkb route (by operationId: its method, path and scope are the route's
declaration), its request model (whose fields describe themselves), and the fields the tool fills in for an agent."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel

from agentkb.api.route import READ, RouteSpec
from agentkb.mcp.calls import ApiRequest
from agentkb.mcp.schemas import add_note, coerce_integers, fill_defaults, make_optional, model_input_schema
from agentkb.models.graph.api import GraphSearchRequest
from agentkb.models.memory.api import MemoryWriteRequest
from agentkb.models.recall.api import RecallRequest
from agentkb.models.search import KnowledgeSearchRequest
from agentkb.models.snapshot import CreateSnapshotRequest

WORKSPACE_NOTE = "Optional when the API key reaches exactly one workspace (that one is used)."
KB_NAME_NOTE = "Knowledge base names work too."


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    operation: str  # the route's operationId
    workspace_path: tuple[str, ...]
    model: type[BaseModel] | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Fields filled with a fresh value when omitted (ids of a new run), with the note shown in the schema.
    generated: Mapping[str, tuple[Callable[[], Any], str]] = field(default_factory=dict)
    query_schema: Mapping[str, Any] | None = None  # GET tools: the query parameters' schema
    kb_paths: tuple[tuple[str, ...], ...] = ()  # knowledge base references, by id or name (see kb_names)

    @cached_property
    def route(self) -> RouteSpec:
        from agentkb.api.routes_table import BY_OPERATION  # every route module: loaded when a tool is first used

        return BY_OPERATION[self.operation]

    @property
    def read_only(self) -> bool:
        return self.route.scope == READ

    def input_schema(self) -> dict[str, Any]:
        if self.model is not None:
            schema = model_input_schema(self.model, defaults=self.defaults)
        else:
            schema = {"type": "object", "properties": dict(self.query_schema or {}), "additionalProperties": False}
        make_optional(schema, self.workspace_path, WORKSPACE_NOTE)
        for name, (_, note) in self.generated.items():
            make_optional(schema, (name,), note)
        for path in self.kb_paths:
            add_note(schema, path, KB_NAME_NOTE)
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
        method, path = self.route.method, self.route.path
        if method == "GET":
            return ApiRequest(method, path, {k: _query_value(v) for k, v in args.items()} or None, None)
        return ApiRequest(method, path, None, args)


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
    operation="searchKnowledge", workspace_path=("workspaceId",), model=KnowledgeSearchRequest,
    kb_paths=(("knowledgeBaseIds",),),
)

SEARCH_GRAPH = ToolSpec(
    name="search_graph", title="Search the knowledge graph",
    description="Bounded, deterministic search of the workspace knowledge graph (services, APIs, repos, owners, "
                "decisions...). Returns matching entities with their relations and proofs; projection 'agent' "
                "gives a compact, token-budgeted view.",
    operation="searchGraph", workspace_path=("workspaceId",), model=GraphSearchRequest,
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
    description="Recall what agents learned before: word (BM25) and meaning (vector) matches over eligible "
                "memories fused by rank, plus 2-hop graph matches for the entities a request names, under a hard "
                "token budget. Only query is needed; scope, limits and sensitivity have "
                "safe defaults (workspace visibility, confirmed and fresh memories only, 10 items, 2000 tokens).",
    operation="recall", workspace_path=("workspace_id",), model=RecallRequest, defaults=RECALL_DEFAULTS,
)

CREATE_SNAPSHOT = ToolSpec(
    name="create_snapshot", title="Create a context snapshot",
    description="Assemble the governed, token-budgeted bundle of context for one agent attempt: the task, inline "
                "items, then knowledge, memory and graph candidates by fused rank, with exclusions and reasons "
                "and a verifiable hash. The same runId + attemptId returns the stored snapshot.",
    operation="createSnapshot", workspace_path=("scope", "workspaceId"), model=CreateSnapshotRequest,
    kb_paths=(("scope", "knowledgeBaseIds"), ("sources", "knowledge", "knowledgeBaseIds")),
    generated={"runId": (_new_uuid, "A new UUID when omitted."),
               "attemptId": (_new_uuid, "A new UUID when omitted.")},
)

WRITE_MEMORY = ToolSpec(
    name="write_memory", title="Write a memory",
    description="Store what an agent learned (decision, incident, note...) so a later recall finds it; entities "
                "and relations join the shared knowledge graph. A name that exists gets a new revision; "
                "idempotency_key makes retries safe. Secrets (keys, tokens) are refused.",
    operation="writeMemory", workspace_path=("workspace_id",), model=MemoryWriteRequest,
    defaults={"visibility": "workspace"},
)

LIST_KNOWLEDGE_BASES = ToolSpec(
    name="list_knowledge_bases", title="List knowledge bases",
    description="The knowledge bases of a workspace, with their names and ids (search_knowledge and "
                "create_snapshot take either), embedding model and tag definitions.",
    operation="listKnowledgeBases", workspace_path=("workspaceId",),
    query_schema={
        "workspaceId": {"type": "string", "minLength": 1, "maxLength": 128, "description": "Workspace to list."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 200, "default": 50, "description": "Page size."},
        "cursor": {"type": "string", "minLength": 1, "maxLength": 2048,
                   "description": "nextCursor of the previous page (opaque)."}},
)

TOOLS: tuple[ToolSpec, ...] = (SEARCH_KNOWLEDGE, SEARCH_GRAPH, RECALL, CREATE_SNAPSHOT, WRITE_MEMORY,
                               LIST_KNOWLEDGE_BASES)
BY_NAME = {tool.name: tool for tool in TOOLS}
