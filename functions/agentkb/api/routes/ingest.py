"""Routes of the ingest function for knowledge: knowledge bases, tags, documents."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Depends, Response
from aws_lambda_powertools.event_handler.openapi.params import Body

from agentkb.api.context import current_principal
from agentkb.api.responses import ERRORS, json_model_response, ok
from agentkb.api.route import Routes
from agentkb.api.routes.knowledge import WorkspaceQuery, kb_out, tags_out
from agentkb.composition import Ports, get_ports
from agentkb.models.domain import Document
from agentkb.models.ingest import (
    AddDocumentRequest,
    CreateKnowledgeBaseRequest,
    DocumentAcceptedOut,
    DocumentAcceptedResponse,
    DocumentOut,
    DocumentResponse,
    KnowledgeBaseResponse,
    TagListResponse,
    UploadDocumentRequest,
)
from agentkb.services.ingest import service as ingest
from agentkb.services.ingest.background import submit_document, submit_upload
from agentkb.services.ingest.service import IngestDeps

routes = Routes()


def ingest_deps(ports: Annotated[Ports, Depends(get_ports)]) -> IngestDeps:
    """The ingest service's ports (also the queue consumer's and the CLI's)."""
    return IngestDeps(ports.catalog, ports.index, ports.embedder, ports.tokenizer, ports.embedding_cache,
                      queue=ports.indexing_queue, embedders=ports.embedders)


Deps = Annotated[IngestDeps, Depends(ingest_deps)]


def _listed(chunks: tuple[int, ...] | None) -> list[int] | None:
    return list(chunks) if chunks is not None else None


@routes.write("POST", "/api/v2/knowledge/bases", "createKnowledgeBase", summary="Create a knowledge base",
              responses={201: ok(KnowledgeBaseResponse, "Created"),
                         409: ERRORS[400] | {"description": "A knowledge base with this name already exists"},
                         **ERRORS})
def create_knowledge_base(request: Annotated[CreateKnowledgeBaseRequest, Body()], deps: Deps) -> Response[Any]:
    kb = ingest.create_knowledge_base(request, current_principal(), deps)
    return json_model_response(201, KnowledgeBaseResponse(data=kb_out(kb)))


@routes.read("GET", "/api/v2/knowledge/bases/{knowledgeBaseId}/tags", "listTags",
             summary="List a knowledge base's tag definitions", responses={200: ok(TagListResponse, "Tags"), **ERRORS})
def list_tags(knowledgeBaseId: str, workspace_id: WorkspaceQuery, deps: Deps) -> Response[Any]:
    kb = ingest.get_knowledge_base(deps.catalog, current_principal(), workspace_id, knowledgeBaseId)
    return json_model_response(200, TagListResponse(data=tags_out(kb)))


_CONFLICT = ERRORS[400] | {"description": "The document is not at expectedRevision (details.currentRevision), or "
                                          "this deployment cannot embed for the KB's profile"}


def _written(doc: Document, accepted: bool) -> Response[Any]:
    """201 with the indexed document, or 202 when it is indexed in the background."""
    if accepted:
        return json_model_response(202, DocumentAcceptedResponse(data=DocumentAcceptedOut(
            id=doc.id, knowledgeBaseId=doc.knowledge_base_id, name=doc.name, contentHash=doc.content_hash,
            revision=doc.revision, status="indexing")))
    out = DocumentOut(id=doc.id, knowledgeBaseId=doc.knowledge_base_id, name=doc.name, chunkCount=doc.chunk_count,
                      tokenCount=doc.token_count, contentHash=doc.content_hash, revision=doc.revision,
                      secretChunks=_listed(doc.secret_chunks))
    return json_model_response(201, DocumentResponse(data=out))


@routes.write("POST", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents", "addDocument",
              summary="Add a document (201: searchable now; 202: big, indexed in the background - GET shows status)",
              responses={201: ok(DocumentResponse, "Indexed"),
                         202: ok(DocumentAcceptedResponse, "Accepted; indexing in the background"),
                         409: _CONFLICT,
                         422: ERRORS[400] | {"description": "A secret was detected and the KB refuses such documents"},
                         **ERRORS})
def add_document(knowledgeBaseId: str, request: Annotated[AddDocumentRequest, Body()], deps: Deps) -> Response[Any]:
    return _written(*submit_document(knowledgeBaseId, request, current_principal(), deps))


@routes.write("POST", "/api/v2/knowledge/bases/{knowledgeBaseId}/uploads", "addDocumentFile",
              summary="Add a document from a file (base64; .md .markdown .txt .html .htm .pdf .docx, text extracted "
                      "as agentkb ingest extracts it); answers as addDocument",
              responses={201: ok(DocumentResponse, "Indexed"),
                         202: ok(DocumentAcceptedResponse, "Accepted; indexing in the background"),
                         409: _CONFLICT,
                         413: ERRORS[400] | {"description": "The body is over the API's limit (2 MiB: files up to "
                                                            "about 1.5 MB), or the file's text is too long"},
                         415: ERRORS[400] | {"description": "A format agentkb does not read"},
                         422: ERRORS[400] | {"description": "The file yields no text (corrupt, encrypted, scanned), "
                                                            "or a secret was detected and the KB refuses it"},
                         **ERRORS})
def add_document_file(knowledgeBaseId: str, request: Annotated[UploadDocumentRequest, Body()],
                      deps: Deps) -> Response[Any]:
    return _written(*submit_upload(knowledgeBaseId, request, current_principal(), deps))


@routes.write("DELETE", "/api/v2/knowledge/bases/{knowledgeBaseId}/documents/{documentId}", "deleteDocument",
              summary="Delete a document", responses={204: {"description": "Deleted"}, **ERRORS})
def delete_document(knowledgeBaseId: str, documentId: str, workspace_id: WorkspaceQuery, deps: Deps) -> Response[Any]:
    ingest.delete_document(knowledgeBaseId, documentId, workspace_id, current_principal(), deps)
    return Response(status_code=204, body="")
