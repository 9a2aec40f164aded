"""Write-path models: knowledge bases, tag definitions, documents."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from agentkb.models.base import Model
from agentkb.models.bounds import MAX_TAG_DEFINITIONS, MAX_TAG_NAME, MAX_TEXT_TAG_VALUE, WorkspaceId
from agentkb.models.domain import SecretPolicy

Name = Annotated[StrictStr, Field(min_length=1, max_length=256)]
MAX_DOCUMENT_CHARS = 1_500_000
TagName = Annotated[StrictStr, Field(min_length=1, max_length=MAX_TAG_NAME)]
# A document's tags: one value per defined tag, of the tag's type (services/tag_filters.py checks which).
DocumentTags = Annotated[dict[TagName, Annotated[StrictStr, Field(max_length=MAX_TEXT_TAG_VALUE)] | StrictBool
                              | StrictInt | StrictFloat], Field(max_length=MAX_TAG_DEFINITIONS)]
MAX_REVISION = 2**53 - 1  # JSON's exact integers: a revision a client reads back is the one it sends
SECRET_POLICY = ("Documents in which the secret detector finds a credential: `flag` stores them with the chunks "
                 "flagged (never reranked, never in snapshots), `refuse` answers 422 and stores nothing")
SECRET_CHUNKS = ("Indexes of the chunks in which a secret was detected (never the secret); absent for a document "
                 "stored before chunks were scanned (re-ingest it to scan it)")


class TagDefinitionInput(Model):
    model_config = ConfigDict(extra="forbid", strict=True)

    tagName: TagName
    fieldType: Literal["text", "number", "date", "boolean"]


class CreateKnowledgeBaseRequest(Model):
    """Create a knowledge base with its embedding profile and typed tag definitions."""

    model_config = ConfigDict(extra="forbid", strict=True, title="Create knowledge base request")

    workspaceId: WorkspaceId
    name: Name
    description: Annotated[StrictStr, Field(max_length=4096)] | None = None
    embeddingModel: Annotated[StrictStr, Field(min_length=1, max_length=256)] | None = None
    tagDefinitions: Annotated[list[TagDefinitionInput], Field(max_length=MAX_TAG_DEFINITIONS)] | None = None
    secretPolicy: SecretPolicy = Field("flag", description=SECRET_POLICY)


class TagDefinitionOut(Model):
    tagName: str
    fieldType: Literal["text", "number", "date", "boolean"]
    slot: str


class KnowledgeBaseOut(Model):
    id: str
    workspaceId: str
    name: str
    description: str | None = None
    embeddingModel: str
    embeddingDimension: int
    tagDefinitions: list[TagDefinitionOut]
    createdAt: str
    secretPolicy: SecretPolicy = "flag"


class KnowledgeBaseResponse(Model):
    data: KnowledgeBaseOut


class TagListResponse(Model):
    data: list[TagDefinitionOut]


ExpectedRevision = Annotated[StrictInt, Field(ge=0, le=MAX_REVISION, description=(
    "The revision this write replaces: 409 CONFLICT with details.currentRevision when the document is at another "
    "one. 0: the document must not exist yet. Omitted: the write replaces whatever is current."))]


class AddDocumentRequest(Model):
    """Add (or replace, by name) a document: chunked, embedded and indexed before the 201 returns."""

    model_config = ConfigDict(extra="forbid", strict=True, title="Add document request")

    workspaceId: WorkspaceId
    name: Name
    content: Annotated[StrictStr, Field(min_length=1, max_length=MAX_DOCUMENT_CHARS)]
    sourceUrl: Annotated[StrictStr, Field(max_length=2048)] | None = None
    tags: DocumentTags | None = None
    expectedRevision: ExpectedRevision | None = None


UPLOAD_BASE64_CHARS = 2 * 1024 * 1024  # the API's body limit (settings.max_body_bytes) cuts sooner: 413


class UploadDocumentRequest(Model):
    """Add (or replace, by name) a document from a file: its bytes base64-encoded, its text extracted on the
    server as `agentkb ingest` extracts it (.md .markdown .txt .html .htm .pdf .docx)."""

    model_config = ConfigDict(extra="forbid", strict=True, title="Upload document request")

    workspaceId: WorkspaceId
    name: Name = Field(description="The file's name (a relative path may name its folder): the document's name; "
                                   "its suffix says the format")
    contentBase64: Annotated[StrictStr, Field(min_length=1, max_length=UPLOAD_BASE64_CHARS)]
    contentType: Annotated[StrictStr, Field(max_length=256)] | None = Field(
        None, description="The file's media type: the format when the name has no suffix")
    sourceUrl: Annotated[StrictStr, Field(max_length=2048)] | None = None
    tags: DocumentTags | None = None
    expectedRevision: ExpectedRevision | None = None


class DocumentOut(Model):
    id: str
    knowledgeBaseId: str
    name: str
    chunkCount: int
    tokenCount: int
    contentHash: str
    revision: int
    secretChunks: list[int] | None = Field(None, description=SECRET_CHUNKS)


class DocumentResponse(Model):
    data: DocumentOut


class KnowledgeBaseListResponse(Model):
    data: list[KnowledgeBaseOut]
    nextCursor: str | None


class DocumentSummaryOut(Model):
    """A document in a list: identity, provenance, size and indexing status (no text)."""

    id: str
    knowledgeBaseId: str
    name: str
    sourceUrl: str | None
    sourcePath: str | None
    tags: dict[str, Any]
    chunkCount: int
    tokenCount: int
    contentHash: str
    revision: int
    status: Literal["indexing", "ready", "failed"]
    error: str | None = None
    createdAt: str
    secretChunks: list[int] | None = Field(None, description=SECRET_CHUNKS)


class DocumentListResponse(Model):
    data: list[DocumentSummaryOut]
    nextCursor: str | None


class DocumentDetailOut(DocumentSummaryOut):
    content: str | None


class DocumentDetailResponse(Model):
    data: DocumentDetailOut


class DocumentAcceptedOut(Model):
    """202: stored and queued; GET the document to see it become `ready` (or `failed`, with the reason)."""

    id: str
    knowledgeBaseId: str
    name: str
    contentHash: str
    revision: int
    status: Literal["indexing"]


class DocumentAcceptedResponse(Model):
    data: DocumentAcceptedOut


class DocumentChunkOut(Model):
    """One chunk of a document as indexed: its text (empty and `secret: true` when the secret detector flagged it:
    the text is withheld), size and the PDF pages it comes from (null for other formats)."""

    chunkIndex: int
    content: str
    tokenCount: int
    pages: list[int] | None
    secret: bool


class DocumentChunkListResponse(Model):
    data: list[DocumentChunkOut]
    nextCursor: str | None
