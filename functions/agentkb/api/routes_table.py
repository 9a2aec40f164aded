"""Every public route: operationId, method, path, owning function and required scope (None = public).

The gate uses it to authenticate and authorise before any body is parsed, and direct invocations use it to
find the route of an operationId. A test checks it against the resolvers' OpenAPI documents.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class RouteSpec:
    operation_id: str
    method: str
    path: str
    function: str
    scope: str | None

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.path) + "$")


READ, WRITE = "api:read", "api:write"

ROUTES: tuple[RouteSpec, ...] = (
    RouteSpec("health", "GET", "/health", "search", None),
    RouteSpec("openapi", "GET", "/openapi.json", "search", None),
    RouteSpec("searchKnowledge", "POST", "/api/v2/knowledge/search", "search", READ),
    RouteSpec("searchGraph", "POST", "/v1/graph/search", "search", READ),
    RouteSpec("recall", "POST", "/v1/recall", "recall", READ),
    RouteSpec("createSnapshot", "POST", "/v1/snapshots", "snapshot", WRITE),
    RouteSpec("getSnapshot", "GET", "/v1/snapshots/{snapshotId}", "snapshot", READ),
    RouteSpec("createKnowledgeBase", "POST", "/api/v2/knowledge/bases", "ingest", WRITE),
    RouteSpec("listTags", "GET", "/api/v2/knowledge/bases/{knowledgeBaseId}/tags", "ingest", READ),
    RouteSpec("addDocument", "POST", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents", "ingest", WRITE),
    RouteSpec("deleteDocument", "DELETE", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents/{documentId}",
              "ingest", WRITE),
    RouteSpec("listKnowledgeBases", "GET", "/api/v2/knowledge/bases", "ingest", READ),
    RouteSpec("getKnowledgeBase", "GET", "/api/v2/knowledge/bases/{knowledgeBaseId}", "ingest", READ),
    RouteSpec("deleteKnowledgeBase", "DELETE", "/api/v2/knowledge/bases/{knowledgeBaseId}", "ingest", WRITE),
    RouteSpec("listDocuments", "GET", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents", "ingest", READ),
    RouteSpec("getDocument", "GET", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents/{documentId}", "ingest",
              READ),
    RouteSpec("writeMemory", "POST", "/v1/memories", "ingest", WRITE),
    RouteSpec("upsertGraph", "POST", "/v1/graph", "ingest", WRITE),
    RouteSpec("listMemories", "GET", "/v1/memories", "ingest", READ),
    RouteSpec("getMemory", "GET", "/v1/memories/{memoryId}", "ingest", READ),
    RouteSpec("deleteMemory", "DELETE", "/v1/memories/{memoryId}", "ingest", WRITE),
    # OB1 Agent Memory API (api/ob1_routes.py). Every route may write (a recall writes its trace), so the write-path
    # function serves them with the grants it has (memory, graph, memory index, Bedrock): no new role. The review
    # queue comes before /ob1/memories/{memory_id}.
    RouteSpec("ob1Health", "GET", "/ob1/health", "ingest", READ),
    RouteSpec("ob1Recall", "POST", "/ob1/recall", "ingest", READ),
    RouteSpec("ob1Writeback", "POST", "/ob1/writeback", "ingest", WRITE),
    RouteSpec("ob1ReportUsage", "POST", "/ob1/recall/{request_id}/usage", "ingest", WRITE),
    RouteSpec("ob1ListMemories", "GET", "/ob1/memories", "ingest", READ),
    RouteSpec("ob1ListMemoriesByBody", "POST", "/ob1/memories/list", "ingest", READ),
    RouteSpec("ob1ReviewQueue", "GET", "/ob1/memories/review", "ingest", READ),
    RouteSpec("ob1ReviewQueueByBody", "POST", "/ob1/memories/review", "ingest", READ),
    RouteSpec("ob1GetMemory", "GET", "/ob1/memories/{memory_id}", "ingest", READ),
    RouteSpec("ob1ReviewMemory", "PATCH", "/ob1/memories/{memory_id}/review", "ingest", WRITE),
    RouteSpec("ob1GetRecallTrace", "GET", "/ob1/recall-traces/{request_id}", "ingest", READ),
)

BY_OPERATION = {r.operation_id: r for r in ROUTES}


def match_route(method: str, path: str) -> tuple[RouteSpec, dict[str, str]] | None:
    """The route for a request, with its path parameters; None when no route has that method and path."""
    for route in ROUTES:
        if route.method == method.upper():
            found = route.pattern.match(path)
            if found:
                return route, found.groupdict()
    return None


def allowed_methods(path: str) -> list[str]:
    """The methods some route serves at `path` (empty for an unknown path): a 405's `Allow` header."""
    return sorted({route.method for route in ROUTES if route.pattern.match(path)})
