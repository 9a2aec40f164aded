"""The MCP server: agentkb's tools over the official SDK's low-level `Server`, on stdio or streamable HTTP.

Each tool call is one API call with the caller's key (see backends), so it passes the gate an HTTP request
passes. Every API error, argument validation included, comes back as a tool result with `isError: true` that
carries the error envelope as structured content; the session keeps serving.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from agentkb.mcp.backends import Api
from agentkb.mcp.calls import ApiResponse
from agentkb.mcp.kb_names import with_kb_ids
from agentkb.mcp.render import RENDERERS, error
from agentkb.mcp.tools import BY_NAME, TOOLS, ToolSpec

INSTRUCTIONS = (
    "agentkb: knowledge, memory and graph context for agents. Call list_knowledge_bases to see the knowledge "
    "bases (tools take their names or ids), search_knowledge for documents, search_graph for services/APIs/owners, "
    "recall for what agents learned before, write_memory to remember something, create_snapshot for a "
    "token-budgeted context bundle. "
    "Errors carry an error envelope {error: {code, message, details}}; fix the arguments and call again."
)

# Keys the workspace of a call may be implied from: None when it cannot be known (then the tool needs it).
WorkspacesOf = Callable[[str], tuple[str, ...] | None]


@dataclass(frozen=True)
class ToolRunner:
    """Runs one tool call: implied workspace, API request, result with text and structured content."""

    api: Api
    default_workspace: str | None = None
    workspaces_of: WorkspacesOf | None = None

    def implied_workspace(self, key: str | None) -> str | None:
        if self.default_workspace is not None:
            return self.default_workspace
        if key is None or self.workspaces_of is None:
            return None
        reach = self.workspaces_of(key) or ()
        return reach[0] if len(reach) == 1 and reach[0] != "*" else None

    def run(self, spec: ToolSpec, arguments: Mapping[str, Any], key: str | None) -> types.CallToolResult:
        request = with_kb_ids(self.api, spec, spec.request(arguments, self.implied_workspace(key)), key)
        response = request if isinstance(request, ApiResponse) else self.api.call(request, key)
        return tool_result(spec, response)


def tool_result(spec: ToolSpec, response: ApiResponse) -> types.CallToolResult:
    body = response.body if isinstance(response.body, dict) else {"result": response.body}
    if response.status >= 400:
        text = error(response.status, response.body, response.headers)
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=body, is_error=True)
    return types.CallToolResult(content=[types.TextContent(text=RENDERERS[spec.name](body))],
                                structured_content=body)


def tool_definition(spec: ToolSpec) -> types.Tool:
    annotations = types.ToolAnnotations(
        title=spec.title, read_only_hint=spec.read_only, idempotent_hint=spec.read_only,
        destructive_hint=False if not spec.read_only else None, open_world_hint=False)
    return types.Tool(name=spec.name, title=spec.title, description=spec.description,
                      input_schema=spec.input_schema(), annotations=annotations)


def presented_key(ctx: ServerRequestContext[Any, Any], server_key: str | None) -> str | None:
    """The key of this call: over HTTP the client's own (`X-API-Key`, or `Authorization: Bearer`), never the
    server's; over stdio the server's (AGENTKB_KEY)."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    if headers is None:
        return server_key
    key = headers.get("x-api-key")
    if key:
        return str(key)
    scheme, _, token = str(headers.get("authorization") or "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentkb")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0+source"


def build_server(runner: ToolRunner, server_key: str | None) -> Server[Any]:
    """The low-level server: tools/list from the tool specs, tools/call through the runner (in a worker thread:
    the handlers are synchronous and may embed a query)."""
    tools = [tool_definition(spec) for spec in TOOLS]

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = BY_NAME.get(params.name)
        if spec is None:  # an unknown tool is a protocol error (the spec's INVALID_PARAMS), not a tool result
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        key = presented_key(ctx, server_key)
        arguments = dict(params.arguments or {})
        result: types.CallToolResult = await anyio.to_thread.run_sync(runner.run, spec, arguments, key)
        return result

    return Server("agentkb", version=_version(), title="agentkb", instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)
