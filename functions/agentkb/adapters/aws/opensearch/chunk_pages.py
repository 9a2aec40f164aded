"""ChunkReader on OpenSearch (ports/chunks.py): a document's chunks of one revision, by index, a page at a time.

The collection shows writes after ~10-60 s: a document just written lists its chunks once they are visible."""

from __future__ import annotations

from typing import Any

from agentkb.adapters.aws.errors import is_index_missing
from agentkb.adapters.aws.opensearch.dsl import index_name
from agentkb.adapters.aws.opensearch.transport import JsonClient
from agentkb.models.domain import Document, KnowledgeBase
from agentkb.ports.chunks import StoredChunk

FIELDS = ["chunk_index", "content", "token_count", "tags", "secret"]


class OpenSearchChunkPages:
    def __init__(self, client: JsonClient, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def document_chunks_page(self, kb: KnowledgeBase, document: Document, after_index: int,
                             limit: int) -> list[StoredChunk]:
        body = {"size": limit, "_source": FIELDS, "sort": [{"chunk_index": "asc"}], "query": {"bool": {"filter": [
            {"term": {"workspace_id": kb.workspace_id}}, {"term": {"knowledge_base_id": kb.id}},
            {"term": {"document_id": document.id}}, {"term": {"revision": document.revision}},
            {"range": {"chunk_index": {"gt": after_index}}}, {"exists": {"field": "chunk_id"}}]}}}
        status, found = self.client.call("POST", f"/{index_name(self.prefix, kb.profile)}/_search", body,
                                         operation="document_chunks", accept=(404,))
        if is_index_missing(status, found):
            return []
        return [_stored(hit["_source"]) for hit in found["hits"]["hits"]]


def _stored(src: dict[str, Any]) -> StoredChunk:
    pages = (src.get("tags") or {}).get("pages") or ()
    secret = src.get("secret")
    return StoredChunk(int(src["chunk_index"]), src["content"], int(src["token_count"]),
                       tuple(pages) if isinstance(pages, list) else (), None if secret is None else bool(secret))
