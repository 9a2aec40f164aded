"""Snapshot candidates per source: knowledge (hybrid search), memory (recall), graph, and inline items.

The scope is applied inside every retrieval call (workspace, project and knowledge bases are query inputs);
a knowledge base the sources ask for but the scope leaves out is never queried and is reported as `denied`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from agentkb.errors import BadRequest
from agentkb.models.domain import Principal
from agentkb.models.graph.api import GraphSearchRequest
from agentkb.models.graph.text import canonical_json
from agentkb.models.search import KnowledgeSearchRequest
from agentkb.models.snapshot import (
    CLASSIFICATION_ORDER,
    Candidate,
    CreateSnapshotRequest,
    InlineItem,
    MemorySource,
    ScopeIn,
)
from agentkb.ports.embedding import Embedder
from agentkb.ports.graph import GraphStore
from agentkb.ports.snapshot import SnapshotStore
from agentkb.services.graph.search import search_graph
from agentkb.services.ingest.chunking import content_hash
from agentkb.services.search.service import SearchDeps, search_knowledge
from agentkb.services.secrets.documents import is_flagged

KNOWLEDGE_CLASSIFICATION, KNOWLEDGE_TRUST = "internal", "trusted-knowledge"
GRAPH_CLASSIFICATION, GRAPH_TRUST = "internal", "trusted-knowledge"
MEMORY_CLASSIFICATION, MEMORY_TRUST = "internal", "agent"
CODE_SUFFIXES = (".py", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc",
                 ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".scala", ".sh", ".ps1", ".lua", ".r", ".m")
SCHEMA_SUFFIXES = (".schema.json", ".proto", ".graphql", ".gql", ".avsc", ".xsd", ".sql", ".openapi.json",
                   ".openapi.yaml", ".openapi.yml", ".tf")

# (scope, principal, memory source) -> memory candidates, best first; the scope goes into the recall query
MemoryRetriever = Callable[[ScopeIn, Principal, MemorySource], list[Candidate]]


@dataclass(frozen=True)
class SourceDeps:
    search: SearchDeps
    graph: GraphStore | None
    snapshots: SnapshotStore
    memory: MemoryRetriever | None = None


@dataclass
class Gathered:
    """Ranked candidate lists per source (each best first) and (source id, reason) of sources never queried."""

    legs: list[list[Candidate]]
    skipped: list[tuple[str, str]]


def source_gate(scope: ScopeIn, classification: str, trust_tier: str) -> str | None:
    """Why a whole source may not be queried under the scope (its labels are known before the query), or None."""
    if CLASSIFICATION_ORDER[classification] > CLASSIFICATION_ORDER[scope.maxClassification]:
        return "classification"
    if scope.allowedTrustTiers is not None and trust_tier not in scope.allowedTrustTiers:
        return "denied"
    return None


def document_class(name: str | None) -> str:
    lowered = (name or "").lower()
    if lowered.endswith(SCHEMA_SUFFIXES):
        return "schema"
    return "code" if lowered.endswith(CODE_SUFFIXES) else "documents"


def document_uri(workspace_id: str, kb_id: str, document_id: str, chunk_index: int | None = None) -> str:
    base = f"agentkb://ws/{quote(workspace_id, safe='')}/kb/{quote(kb_id, safe='')}/documents/{quote(document_id)}"
    return base if chunk_index is None else f"{base}#chunk={chunk_index}"


def knowledge_candidates(request: CreateSnapshotRequest, principal: Principal, deps: SourceDeps) -> Gathered:
    source = request.sources.knowledge if request.sources else None
    if source is None:
        return Gathered([], [])
    scope = request.scope
    wanted = list(dict.fromkeys(source.knowledgeBaseIds))
    allowed = wanted if scope.knowledgeBaseIds is None else [k for k in wanted if k in scope.knowledgeBaseIds]
    skipped = [(f"knowledge-base:{k}", "denied") for k in wanted if k not in allowed]
    query = source.query or request.task
    if not query and not source.tagFilters:
        raise BadRequest("The knowledge source needs a query, tag filters or a task",
                         details=[{"path": "sources.knowledge.query", "message": "required without task"}])
    gate = source_gate(scope, KNOWLEDGE_CLASSIFICATION, KNOWLEDGE_TRUST)
    if gate is not None:
        skipped.extend((f"knowledge-base:{k}", gate) for k in allowed)
        allowed = []
    if not allowed:
        return Gathered([], skipped)
    search = KnowledgeSearchRequest(workspaceId=scope.workspaceId, knowledgeBaseIds=allowed, query=query,
                                    topK=source.topK, tagFilters=source.tagFilters, searchMode="hybrid")
    outcome = search_knowledge(search, principal, deps.search)
    results = outcome.data.results
    catalog = deps.search.catalog
    kbs = {kb.id: kb for kb in outcome.knowledge_bases}  # the search has read (and checked) every allowed KB
    versions = {k: deps.snapshots.index_version(k) for k in allowed}
    leg: list[Candidate] = []
    for r, hit in zip(results, outcome.hits, strict=True):
        kb = kbs.get(r.knowledgeBaseId)
        document = catalog.get_document(r.knowledgeBaseId, r.documentId)
        revision = document.content_hash if document else "unknown"
        leg.append(Candidate(
            key=f"knowledge:{r.documentId}:{r.chunkIndex}", item_class=document_class(r.documentName),
            content=r.content, source_id=r.documentId, source_revision=revision,
            chunk_id=f"{r.documentId}:{document.revision if document else 0}:{r.chunkIndex}",
            trust_tier=KNOWLEDGE_TRUST, classification=KNOWLEDGE_CLASSIFICATION,
            provenance=document_uri(scope.workspaceId, r.knowledgeBaseId, r.documentId, r.chunkIndex),
            index_version=f"{r.knowledgeBaseId}@{versions[r.knowledgeBaseId]}",
            embedding_profile=kb.profile.key if kb else None,
            stale=document is None,  # the index still serves a document the catalog no longer has
            secret=is_flagged(hit)))
    return Gathered([leg], skipped)


def _entity_text(entity: dict[str, Any], relations: list[dict[str, Any]], labels: dict[str, str]) -> str:
    lines = [f"{entity['label']} ({entity['kind']})"]
    identity = entity.get("identity") or {}
    if identity.get("aliases"):
        lines.append("aliases: " + ", ".join(identity["aliases"]))
    for name in sorted(entity.get("attributes") or {}):
        lines.append(f"{name}: {entity['attributes'][name]}")
    for rel in relations:
        lines.append(f"{labels.get(rel['from'], rel['from'])} {rel['kind']} {labels.get(rel['to'], rel['to'])}"
                     f" ({rel['trust']}, {rel['confidence']})")
    return "\n".join(lines)


def graph_candidates(request: CreateSnapshotRequest, deps: SourceDeps) -> Gathered:
    source = request.sources.graph if request.sources else None
    if source is None or deps.graph is None:
        return Gathered([], [])
    gate = source_gate(request.scope, GRAPH_CLASSIFICATION, GRAPH_TRUST)
    if gate is not None:
        return Gathered([], [("graph", gate)])
    ws = request.scope.workspaceId
    body = search_graph(deps.graph, GraphSearchRequest(workspaceId=ws, query=source.query, kind=source.kind,
                                                       projectId=request.scope.projectId, limit=source.limit))
    labels = {e["id"]: e["label"] for e in (*body["entities"], *body["relatedEntities"])}
    freshness = {p["id"]: p.get("freshness", "unknown") for p in body["proofs"]}
    out: list[Candidate] = []
    for entity in body["entities"]:
        relations = [r for r in body["relations"] if entity["id"] in (r["from"], r["to"])]
        proof_ids = entity["proofIds"]  # an entity whose own evidence is all stale is stale
        out.append(Candidate(
            key=f"graph:{entity['id']}", item_class="graph", content=_entity_text(entity, relations, labels),
            source_id=entity["id"], source_revision=content_hash(canonical_json(entity)), chunk_id=entity["id"],
            trust_tier=GRAPH_TRUST, classification=GRAPH_CLASSIFICATION,
            provenance=f"agentkb://ws/{quote(ws, safe='')}/graph/entities/{quote(entity['id'], safe='')}",
            index_version=body["graphSourceHash"],
            stale=bool(proof_ids) and all(freshness.get(p) == "stale" for p in proof_ids)))
    return Gathered([out], [])


def memory_candidates(request: CreateSnapshotRequest, principal: Principal, deps: SourceDeps) -> Gathered:
    source = request.sources.memory if request.sources else None
    if source is None or deps.memory is None:
        return Gathered([], [])  # no recall feature in this build: the memory source contributes nothing
    gate = source_gate(request.scope, MEMORY_CLASSIFICATION, MEMORY_TRUST)
    if gate is not None:
        return Gathered([], [("memory", gate)])
    return Gathered([deps.memory(request.scope, principal, source)], [])


def parse_document_uri(uri: str | None) -> tuple[str, str, str] | None:
    if not uri or not uri.startswith("agentkb://ws/"):
        return None
    parts = uri.removeprefix("agentkb://").split("#", 1)[0].split("/")
    if len(parts) != 6 or parts[0] != "ws" or parts[2] != "kb" or parts[4] != "documents":
        return None
    return unquote(parts[1]), unquote(parts[3]), unquote(parts[5])


def inline_candidates(request: CreateSnapshotRequest, deps: SourceDeps) -> list[Candidate]:
    """Inline items in request order; one that cites a knowledge document at an old revision is stale."""
    out: list[Candidate] = []
    for position, item in enumerate(request.items or []):
        out.append(Candidate(
            key=f"inline:{position}", item_class=item.class_, content=item.content, source_id=item.sourceId,
            source_revision=item.sourceRevision, chunk_id=f"inline:{position}", trust_tier=item.trustTier,
            classification=item.classification,
            provenance=item.provenance or f"agentkb://inline/{quote(item.sourceId, safe='')}",
            stale=item.stale or _superseded(item, request.scope.workspaceId, deps)))
    return out


def _superseded(item: InlineItem, workspace_id: str, deps: SourceDeps) -> bool:
    cited = parse_document_uri(item.provenance)
    if cited is None or cited[0] != workspace_id:
        return False
    if deps.search.catalog.get_knowledge_base(workspace_id, cited[1]) is None:
        return False
    document = deps.search.catalog.get_document(cited[1], cited[2])
    return document is None or item.sourceRevision not in (document.content_hash, str(document.revision))


def task_candidate(request: CreateSnapshotRequest) -> Candidate | None:
    """The task as the first item: the caller's own words, labelled at the scope's classification ceiling."""
    if not request.task:
        return None
    digest = content_hash(request.task)
    return Candidate(key="task", item_class="task", content=request.task, source_id=f"attempt:{request.attemptId}",
                     source_revision=digest, chunk_id="task", trust_tier="user",
                     classification=request.scope.maxClassification,
                     provenance=f"agentkb://runs/{request.runId}/attempts/{request.attemptId}/task")


class MemoizedEmbedder:
    """One request's embedder: the knowledge and memory sources usually embed the same query text once."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self._queries: dict[str, list[float]] = {}

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed_query(self, text: str) -> list[float]:
        if text not in self._queries:
            self._queries[text] = self.inner.embed_query(text)
        return self._queries[text]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)
