"""`list_knowledge_bases` in --data-dir mode while this build has no `GET /api/v2/knowledge/bases` route.

The request passes the API's own gate (`check_request`: key, per-key rate limit, `api:read`, query checks) and
the workspace-reach rule, then reads the catalog and answers in that route's documented shape
(`{"data": [...], "nextCursor"}`). Once the route exists the in-process API calls it instead (see backends).
"""

from __future__ import annotations

from typing import Any

from agentkb.api.gate import check_request, rate_headers
from agentkb.api.routes_table import READ, RouteSpec
from agentkb.errors import BadRequest, DomainError, NotFound
from agentkb.local.server import to_rest_event
from agentkb.mcp.calls import ApiRequest, ApiResponse, api_headers, api_target

ROUTE = RouteSpec("listKnowledgeBases", "GET", "/api/v2/knowledge/bases", "ingest", READ)
MAX_PAGE = 200


def _page(query: dict[str, str]) -> tuple[str, int, int]:
    workspace = query.get("workspaceId", "")
    if not workspace or len(workspace) > 128:
        raise BadRequest("Invalid request", details=[{"path": "query.workspaceId",
                                                      "message": "required, 1..128 characters"}])
    try:
        limit = int(query.get("limit", "50"))
        offset = int(query.get("cursor", "0"))
    except ValueError:
        limit = offset = -1
    if not 1 <= limit <= MAX_PAGE or offset < 0:
        raise BadRequest("Invalid request", details=[{"path": "query", "message": "limit 1..200 and a valid cursor"}])
    return workspace, limit, offset


def _kb_out(kb: Any) -> dict[str, Any]:
    return {"id": kb.id, "workspaceId": kb.workspace_id, "name": kb.name, "description": kb.description,
            "embeddingModel": kb.profile.model, "embeddingDimension": kb.profile.dimension,
            "tagDefinitions": [{"tagName": t.tag_name, "fieldType": t.field_type, "slot": t.slot}
                               for t in kb.tag_definitions], "createdAt": kb.created_at}


def list_from_catalog(request: ApiRequest, key: str | None) -> ApiResponse:
    from agentkb.composition import get_ports

    ports = get_ports()
    event = to_rest_event(request.method, api_target(request), api_headers(key), b"")
    headers: dict[str, str] = {}
    try:
        principal, decision = check_request(event, ROUTE, ports, None)
        headers = rate_headers(decision) if decision is not None else {}
        workspace, limit, offset = _page(request.query or {})
        if principal is None or not principal.can_reach(workspace):
            raise NotFound("Workspace not found")
        kbs = sorted(ports.catalog.list_knowledge_bases(workspace), key=lambda kb: (kb.name, kb.id))
    except DomainError as exc:
        merged = {**headers, **exc.headers}
        return ApiResponse(exc.http_status, {k.lower(): v for k, v in merged.items()}, exc.envelope())
    page = kbs[offset:offset + limit]
    cursor = str(offset + limit) if offset + limit < len(kbs) else None
    return ApiResponse(200, {k.lower(): v for k, v in headers.items()},
                       {"data": [_kb_out(kb) for kb in page], "nextCursor": cursor})
