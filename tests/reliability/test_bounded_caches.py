"""The embedded engine's in-process caches stay bounded by the data that exists (the soak, bench/load/serve.py --steady,
measures the process as a whole): a deleted knowledge base's chunk table is dropped, and naming a workspace that
holds no memories leaves nothing behind in recall's vector and facet caches."""

from __future__ import annotations

from agentkb.composition import Ports
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.services.ingest import service as ingest
from tests.helpers import body_of, mint, rest_event
from tests.reliability.corpus import replay


def _search(key: str, ws: str, kb_id: str) -> int:
    event = rest_event("POST", "/api/v2/knowledge/search", {"workspaceId": ws, "knowledgeBaseIds": [kb_id],
                                                            "query": "rotation runbook"}, key=key)
    return int(replay(event)["statusCode"])


def test_a_deleted_knowledge_base_leaves_no_chunk_table_behind(bundle: Ports) -> None:
    # Given a knowledge base that was searched (its chunk table is cached)
    key = mint(bundle, ["ws-cache"], ["api:read", "api:write"], "alice")
    tables = bundle.index.tables._tables
    kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId="ws-cache", name="kb"), OPERATOR,
                                      deps(bundle))
    ingest.add_document(kb.id, AddDocumentRequest(workspaceId="ws-cache", name="a.md",
                                                  content="The key rotation runbook."), OPERATOR, deps(bundle))
    assert _search(key, "ws-cache", kb.id) == 200
    assert kb.id in tables
    # When it is deleted through the API
    deleted = replay(rest_event("DELETE", f"/api/v2/knowledge/bases/{kb.id}", query={"workspaceId": "ws-cache"},
                                key=key, resource="/api/v2/knowledge/bases/{knowledgeBaseId}"))
    assert deleted["statusCode"] == 204, body_of(deleted)
    # Then its table is gone, and asking for it again caches nothing
    assert kb.id not in tables
    assert len(bundle.index.tables.get(bundle.index.db.connection(), kb.id).rowids) == 0
    assert kb.id not in tables


def test_recall_over_workspaces_without_memories_caches_nothing(bundle: Ports) -> None:
    # Given the recall leg's caches, and workspaces that never held a memory
    matrices, facets = bundle.memories._matrices, bundle.memories._facet_cache
    before = (set(matrices), set(facets))
    key = mint(bundle, [f"ws-empty-{n}" for n in range(5)], ["api:read"], "alice")
    for n in range(5):
        request = {"schema_version": "openbrain.openclaw.recall.v1", "workspace_id": f"ws-empty-{n}",
                   "task_type": "general", "query": "deploy", "entities": {},
                   "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
                             "include_stale": False}, "limits": {"max_items": 5, "max_tokens": 2000},
                   "sensitivity": {"contains_code": False, "contains_customer_data": False,
                                   "contains_private_meeting_data": False}}
        assert replay(rest_event("POST", "/v1/recall", request, key=key))["statusCode"] == 200
    # Then nothing was remembered for them
    assert (set(matrices), set(facets)) == before
