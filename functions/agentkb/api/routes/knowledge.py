"""Management routes of the ingest function: list, inspect and delete knowledge bases and documents."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Query

from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, json_model_response, ok
from agentkb.api.route import Routes
from agentkb.composition import Ports, get_ports
from agentkb.models.bounds import MAX_WORKSPACE_ID
from agentkb.models.domain import Document, KnowledgeBase
from agentkb.models.ingest import (
    DocumentChunkListResponse,
    DocumentChunkOut,
    DocumentDetailOut,
    DocumentDetailResponse,
    DocumentListResponse,
    DocumentSummaryOut,
    KnowledgeBaseListResponse,
    KnowledgeBaseOut,
    KnowledgeBaseResponse,
    TagDefinitionOut,
)
from agentkb.paging import CURSOR_DESCRIPTION, CURSOR_PATTERN, PAGE_DEFAULT, PAGE_MAX
from agentkb.services.ingest import knowledge_admin
from agentkb.services.ingest.service import get_knowledge_base

routes = Routes()
WorkspaceQuery = Annotated[str, Query(alias="workspaceId", min_length=1, max_length=MAX_WORKSPACE_ID)]
LimitQuery = Annotated[int, Query(alias="limit", ge=1, le=PAGE_MAX)]
CursorQuery = Annotated[str | None, Query(alias="cursor", min_length=1, max_length=2048, pattern=CURSOR_PATTERN,
                                           description=CURSOR_DESCRIPTION)]
PortsDep = Annotated[Ports, Depends(get_ports)]


def tags_out(kb: KnowledgeBase) -> list[TagDefinitionOut]:
    return [TagDefinitionOut(tagName=t.tag_name, fieldType=t.field_type, slot=t.slot) for t in kb.tag_definitions]


def kb_out(kb: KnowledgeBase) -> KnowledgeBaseOut:
    """A knowledge base as every route answers it (also `POST /api/v2/knowledge/bases`, routes/ingest.py)."""
    return KnowledgeBaseOut(id=kb.id, workspaceId=kb.workspace_id, name=kb.name, description=kb.description,
                            embeddingModel=kb.profile.model, embeddingDimension=kb.profile.dimension,
                            tagDefinitions=tags_out(kb), createdAt=kb.created_at, secretPolicy=kb.secret_policy)


def _summary(doc: Document) -> dict[str, Any]:
    return {"id": doc.id, "knowledgeBaseId": doc.knowledge_base_id, "name": doc.name, "sourceUrl": doc.source_url,
            "sourcePath": doc.source_path, "tags": doc.tags, "chunkCount": doc.chunk_count,
            "tokenCount": doc.token_count, "contentHash": doc.content_hash, "revision": doc.revision,
            "status": doc.status, "createdAt": doc.created_at, **({"error": doc.error} if doc.error else {}),
            **({"secretChunks": list(doc.secret_chunks)} if doc.secret_chunks is not None else {})}


@routes.read("GET", "/api/v2/knowledge/bases", "listKnowledgeBases",
             summary="List the workspace's knowledge bases (paged)",
             responses={200: ok(KnowledgeBaseListResponse, "A page of knowledge bases"), **ERRORS})
def list_knowledge_bases(workspace_id: WorkspaceQuery, ports: PortsDep, limit: LimitQuery = PAGE_DEFAULT,
                         cursor: CursorQuery = None) -> Response[Any]:
    page = knowledge_admin.list_knowledge_bases(ports.catalog, current_principal(), workspace_id, limit,
                                                cursor)
    return json_model_response(200, KnowledgeBaseListResponse(data=[kb_out(kb) for kb in page.items],
                                                              nextCursor=page.next_cursor))


@routes.read("GET", "/api/v2/knowledge/bases/{knowledgeBaseId}", "getKnowledgeBase", summary="A knowledge base",
             responses={200: ok(KnowledgeBaseResponse, "The knowledge base"), **ERRORS})
def get_knowledge_base_route(knowledgeBaseId: str, workspace_id: WorkspaceQuery, ports: PortsDep) -> Response[Any]:
    kb = get_knowledge_base(ports.catalog, current_principal(), workspace_id, knowledgeBaseId)
    return json_model_response(200, KnowledgeBaseResponse(data=kb_out(kb)))


@routes.write("DELETE", "/api/v2/knowledge/bases/{knowledgeBaseId}", "deleteKnowledgeBase",
              summary="Delete a knowledge base with its documents, chunks, vectors and index entries",
              responses={204: {"description": "Deleted"}, **ERRORS})
def delete_knowledge_base(knowledgeBaseId: str, workspace_id: WorkspaceQuery, ports: PortsDep) -> Response[Any]:
    knowledge_admin.delete_knowledge_base(ports.catalog, ports.index, current_principal(), workspace_id,
                                          knowledgeBaseId, ports.generations)
    return Response(status_code=204, body="")


@routes.read("GET", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents", "listDocuments",
             summary="List a knowledge base's documents with their status (paged)",
             responses={200: ok(DocumentListResponse, "A page of documents"), **ERRORS})
def list_documents(knowledgeBaseId: str, workspace_id: WorkspaceQuery, ports: PortsDep,
                   limit: LimitQuery = PAGE_DEFAULT, cursor: CursorQuery = None) -> Response[Any]:
    page = knowledge_admin.list_documents(ports.catalog, current_principal(), workspace_id,
                                          knowledgeBaseId, limit, cursor)
    return json_model_response(200, DocumentListResponse(
        data=[DocumentSummaryOut(**_summary(d)) for d in page.items], nextCursor=page.next_cursor))


@routes.read("GET", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents/{documentId}", "getDocument",
             summary="A document: status (indexing, ready, failed), provenance and text",
             responses={200: ok(DocumentDetailResponse, "The document"), **ERRORS})
def get_document(knowledgeBaseId: str, documentId: str, workspace_id: WorkspaceQuery,
                 ports: PortsDep) -> Response[Any]:
    doc, content = knowledge_admin.get_document(ports.catalog, current_principal(), workspace_id,
                                                knowledgeBaseId, documentId)
    return json_model_response(200, DocumentDetailResponse(data=DocumentDetailOut(**_summary(doc), content=content)))


@routes.read("GET", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents/{documentId}/chunks", "listDocumentChunks",
             summary="A document's chunks by index (paged): text, tokens, pages; a chunk with a detected secret "
                     "has its text withheld. AWS: the index shows a write after ~10-60 s",
             responses={200: ok(DocumentChunkListResponse, "A page of chunks"), **ERRORS})
def list_document_chunks(knowledgeBaseId: str, documentId: str, workspace_id: WorkspaceQuery, ports: PortsDep,
                         limit: LimitQuery = PAGE_DEFAULT, cursor: CursorQuery = None) -> Response[Any]:
    page = knowledge_admin.document_chunks(ports.catalog, ports.chunks, current_principal(), workspace_id,
                                           knowledgeBaseId, documentId, limit, cursor)
    return json_model_response(200, DocumentChunkListResponse(data=[DocumentChunkOut(
        chunkIndex=c.chunk_index, content=c.content, tokenCount=c.token_count, pages=list(c.pages) or None,
        secret=bool(c.secret)) for c in page.items], nextCursor=page.next_cursor))
