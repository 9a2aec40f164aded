"""Knowledge search request/response models: the v2 contract, exactly (additionalProperties: false)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, field_validator

from agentkb.models.base import Model
from agentkb.models.bounds import (
    MAX_KNOWLEDGE_BASES,
    MAX_QUERY_CHARS,
    MAX_TAG_FILTERS,
    MAX_TAG_NAME,
    MAX_TEXT_TAG_VALUE,
    KnowledgeBaseId,
    WorkspaceId,
)
from agentkb.models.numbers import JsonInt

TagOperator = Literal["eq", "neq", "contains", "not_contains", "starts_with", "ends_with",
                      "gt", "gte", "lt", "lte", "between"]
RerankerModel = Literal["rerank-v4.0-pro", "rerank-v4.0-fast", "rerank-v3.5"]
TagText = Annotated[StrictStr, Field(max_length=MAX_TEXT_TAG_VALUE)]


class Strict(Model):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class KnowledgeSearchTagFilter(Strict):
    """A structured tag filter applied to knowledge search."""

    model_config = ConfigDict(title="Knowledge search tag filter", extra="forbid", strict=True)

    tagName: Annotated[StrictStr, Field(max_length=MAX_TAG_NAME)] = Field(
        description="Display name of the tag to filter.")
    fieldType: Literal["text", "number", "date", "boolean"] | None = Field(default=None,
                                                                          description="Tag field type.")
    operator: TagOperator = Field(default="eq", description="Comparison operator; valid operators depend on "
                                  "the field type.")
    value: TagText | StrictInt | StrictFloat | StrictBool = Field(description="Tag value to compare against.")
    valueTo: TagText | StrictInt | StrictFloat | None = Field(default=None,
                                                                description="Upper bound for `between`.")


class KnowledgeSearchRequest(Strict):
    """Knowledge bases, query, result limit, retrieval mode, and optional tag filters."""

    model_config = ConfigDict(title="Search knowledge request", extra="forbid", strict=True)

    workspaceId: WorkspaceId = Field(description="Workspace that owns the knowledge bases.")
    knowledgeBaseIds: KnowledgeBaseId | Annotated[
        list[KnowledgeBaseId], Field(min_length=1, max_length=MAX_KNOWLEDGE_BASES)] = Field(
            description="One knowledge base id, or a list of 1..20 ids.")
    query: Annotated[StrictStr, Field(max_length=MAX_QUERY_CHARS)] | None = Field(
        None, description="What to search for. Omit for a tag-filter-only search.")
    topK: Annotated[JsonInt, Field(ge=1, le=100)] = Field(
        10, description="How many chunks to return (1..100, default 10).")
    tagFilters: Annotated[list[KnowledgeSearchTagFilter], Field(max_length=MAX_TAG_FILTERS)] | None = Field(
        None, description="Up to 10 tag filters, AND-ed; operators must fit the tag's field type.")
    searchMode: Literal["vector", "hybrid"] | None = Field(
        None, description="vector or hybrid; omitted = the workspace policy (hybrid).")
    rerankerEnabled: StrictBool | None = Field(
        None, description="Ask for reranking (reported honestly in rerankerStatus).")
    rerankerModel: RerankerModel = Field("rerank-v4.0-fast", description="Reranker model, when reranking is available.")
    rerankerInputCount: Annotated[StrictInt, Field(ge=1, le=100)] | None = Field(
        None, description="Candidate pool for the reranker (1..100).")

    @field_validator("topK")
    @classmethod
    def _whole_number(cls, value: float) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise ValueError("topK must be a whole number between 1 and 100")
        return int(value)

    def kb_ids(self) -> list[str]:
        ids = [self.knowledgeBaseIds] if isinstance(self.knowledgeBaseIds, str) else self.knowledgeBaseIds
        return list(dict.fromkeys(ids))


class KnowledgeSearchResult(Model):
    """A matching document chunk returned by knowledge search."""

    model_config = ConfigDict(title="Knowledge search result", extra="forbid")

    knowledgeBaseId: str
    documentId: str
    documentName: str | None
    sourceUrl: str | None
    content: str
    chunkIndex: Annotated[int, Field(ge=0)]
    metadata: dict[str, Any]
    similarity: float
    rankScore: float
    rank: Annotated[int, Field(gt=0)]
    rerankerScore: float | None = Field(default=None, description="Present only on results a reranker ordered.")


class KnowledgeSearchData(Model):
    model_config = ConfigDict(title="Knowledge search data", extra="forbid")

    results: list[KnowledgeSearchResult]
    query: str
    knowledgeBaseIds: list[str]
    topK: Annotated[int, Field(gt=0)]
    totalResults: Annotated[int, Field(ge=0)]
    rerankerStatus: Literal["not_requested", "skipped", "unavailable", "applied"]


class KnowledgeSearchResponse(Model):
    """Matching chunks and search execution context."""

    model_config = ConfigDict(title="Knowledge search response", extra="forbid")

    data: KnowledgeSearchData


class ErrorBody(Model):
    model_config = ConfigDict(extra="forbid")

    code: str
    message: str
    details: Any | None = None


class ErrorResponse(Model):
    """Canonical error envelope returned by every route."""

    model_config = ConfigDict(title="v2 error response", extra="forbid")

    error: ErrorBody
