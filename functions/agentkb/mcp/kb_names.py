"""Knowledge bases by name or id in tool arguments: agents know them by name ("handbook"), the API takes ids.

A reference that is a UUID is an id (knowledge base ids are UUIDs) and goes to the API as it is, so a call with
ids stays one API call. Any other reference is a name: the tool lists the workspace's knowledge bases with the
caller's key (`GET /api/v2/knowledge/bases`, through the same gate as every call: key, scope, reach, rate
limit) and puts the id in its place. A name no knowledge base has is NOT_FOUND; a name two have (names are
unique in a workspace, but two concurrent creations can both pass that check) is BAD_REQUEST with their ids.
Both backends alike: the listing is an API call, in process or over HTTP.
"""

from __future__ import annotations

import copy
import re
from dataclasses import replace
from typing import Any

from agentkb.errors import error_envelope
from agentkb.mcp.backends import Api
from agentkb.mcp.calls import ApiRequest, ApiResponse
from agentkb.mcp.tools import LIST_KNOWLEDGE_BASES, ToolSpec

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
PAGE_SIZE = 200  # the list route's largest page
MAX_PAGES = 100  # a bound on a listing that never ends (a broken API), far beyond any workspace's knowledge bases


def _get(body: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        body = body.get(name) if isinstance(body, dict) else None
    return body


def _names(value: Any) -> set[str]:
    refs = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return {ref for ref in refs if isinstance(ref, str) and not UUID.fullmatch(ref)}


def _listing(api: Api, workspace: str, key: str | None) -> list[tuple[str, str]] | ApiResponse:
    """(id, name) of every knowledge base of the workspace the key reaches, or the API's error."""
    found: list[tuple[str, str]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        query = {"workspaceId": workspace, "limit": str(PAGE_SIZE), **({"cursor": cursor} if cursor else {})}
        response = api.call(ApiRequest("GET", LIST_KNOWLEDGE_BASES.route.path, query, None), key)
        if response.status >= 400:
            return response
        if not isinstance(response.body, dict):
            return ApiResponse(502, {}, error_envelope("INTERNAL_ERROR", "The knowledge base listing is not an object"))
        found += [(str(kb.get("id")), str(kb.get("name"))) for kb in response.body.get("data") or []]
        cursor = response.body.get("nextCursor")
        if not cursor:
            break
    return found


def _resolve(ref: str, kbs: list[tuple[str, str]], workspace: str) -> str | ApiResponse:
    if UUID.fullmatch(ref) or any(kb_id == ref for kb_id, _ in kbs):
        return ref
    named = [kb_id for kb_id, name in kbs if name == ref]
    if len(named) == 1:
        return named[0]
    if not named:
        return ApiResponse(404, {}, error_envelope(
            "NOT_FOUND", f"No knowledge base is named {ref!r} in workspace {workspace!r} (ids and names are "
                         "accepted: list_knowledge_bases shows both)", {"knowledgeBaseId": ref}))
    return ApiResponse(400, {}, error_envelope(
        "BAD_REQUEST", f"{len(named)} knowledge bases are named {ref!r} in workspace {workspace!r}: pass an id",
        {"knowledgeBaseId": ref, "candidates": named}))


def _resolved(value: Any, kbs: list[tuple[str, str]], workspace: str) -> Any:
    if isinstance(value, str):
        return _resolve(value, kbs, workspace)
    out = []
    for ref in value:
        one = _resolve(ref, kbs, workspace) if isinstance(ref, str) else ref
        if isinstance(one, ApiResponse):
            return one
        out.append(one)
    return out


def with_kb_ids(api: Api, spec: ToolSpec, request: ApiRequest, key: str | None) -> ApiRequest | ApiResponse:
    """The request with every knowledge base name replaced by its id, or the error that stops the call."""
    body = request.body
    refs = {path: _get(body, path) for path in spec.kb_paths}
    workspace = _get(body, spec.workspace_path)
    if body is None or not any(_names(value) for value in refs.values()) or not isinstance(workspace, str):
        return request  # ids only, or no workspace to look in (the API answers that)
    kbs = _listing(api, workspace, key)
    if isinstance(kbs, ApiResponse):
        return kbs
    out = copy.deepcopy(body)
    for path, value in refs.items():
        if not _names(value):
            continue
        resolved = _resolved(value, kbs, workspace)
        if isinstance(resolved, ApiResponse):
            return resolved
        parent = _get(out, path[:-1])
        parent[path[-1]] = resolved
    return replace(request, body=out)
