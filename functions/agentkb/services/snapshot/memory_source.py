"""The memory source of a snapshot: a recall (the recall feature's service) under the snapshot's scope.

The scope becomes the recall request: its workspace and project, project-only when a project is set, and the
sensitivity flags the classification ceiling admits (code from `internal`, customer and private-meeting data from
`confidential`), so the store filters inside its query. Items carry what recall shows: name, description and
the first 200 characters of the body.
"""

from __future__ import annotations

from functools import partial
from urllib.parse import quote

from agentkb.models.domain import Principal
from agentkb.models.recall.api import RecallRequest
from agentkb.models.snapshot import CLASSIFICATION_ORDER, Candidate, MemorySource, ScopeIn
from agentkb.services.ingest.chunking import content_hash
from agentkb.services.recall.service import RecallDeps, recall
from agentkb.services.snapshot.sources import MEMORY_TRUST, MemoryRetriever


def recall_request(scope: ScopeIn, source: MemorySource) -> RecallRequest:
    ceiling = CLASSIFICATION_ORDER[scope.maxClassification]
    sensitive = ceiling >= CLASSIFICATION_ORDER["confidential"]
    return RecallRequest.model_validate({
        "schema_version": "openbrain.openclaw.recall.v1", "workspace_id": scope.workspaceId,
        "project_id": scope.projectId, "task_type": "general", "query": source.query, "entities": {},
        "scope": {"visibility": "project" if scope.projectId else "workspace",
                  "project_only": scope.projectId is not None, "include_unconfirmed": False, "include_stale": False},
        "limits": {"max_items": source.maxItems, "max_tokens": source.maxTokens, "recency_days": source.recencyDays},
        "sensitivity": {"contains_code": ceiling >= CLASSIFICATION_ORDER["internal"],
                        "contains_customer_data": sensitive, "contains_private_meeting_data": sensitive}})


def recall_memories(deps: RecallDeps, scope: ScopeIn, principal: Principal, source: MemorySource) -> list[Candidate]:
    """Recall results (direct then graph matches, as recall ranks them) as snapshot candidates."""
    response = recall(recall_request(scope, source), principal, deps).response
    # Sensitive memories are only eligible under a confidential ceiling; label them all at it, conservatively.
    label = "confidential" if CLASSIFICATION_ORDER[scope.maxClassification] >= 2 else "internal"
    out: list[Candidate] = []
    for item in response.results:
        text = "\n".join(part for part in (item.name, item.description, item.snippet) if part)
        memory_id = str(item.memory_id)
        out.append(Candidate(
            key=f"memory:{memory_id}", item_class="memory", content=text, source_id=item.name,
            source_revision=content_hash(text), chunk_id=f"memory:{memory_id}", trust_tier=MEMORY_TRUST,
            classification=label,
            provenance=f"agentkb://ws/{quote(scope.workspaceId, safe='')}/memories/{memory_id}",
            embedding_profile=f"{deps.embedder.model_id}@{deps.embedder.dimension}"))
    return out


def memory_retriever(deps: RecallDeps) -> MemoryRetriever:
    return partial(recall_memories, deps)
