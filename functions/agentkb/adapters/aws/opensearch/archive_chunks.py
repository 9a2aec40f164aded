"""A document's chunks as the OpenSearch index stores them (vectors included), for export (ports/archive.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.errors import is_index_missing
from agentkb.adapters.aws.opensearch.dsl import index_name
from agentkb.adapters.aws.opensearch.transport import JsonClient
from agentkb.models.domain import Chunk, KnowledgeBase

MAX_CHUNKS = 10_000  # OpenSearch's default result window: a document has far fewer chunks


class OpenSearchChunkReader:
    def __init__(self, client: JsonClient, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def document_chunks(self, kb: KnowledgeBase, document_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        """The chunks of each document's newest revision in the index, by chunk index: a search per document (a
        document's chunks fit one result window; several documents' might not)."""
        found = {document_id: self._chunks(kb, document_id) for document_id in dict.fromkeys(document_ids)}
        return {document_id: chunks for document_id, chunks in found.items() if chunks}

    def _chunks(self, kb: KnowledgeBase, document_id: str) -> list[Chunk]:
        body = {"size": MAX_CHUNKS, "sort": [{"chunk_index": "asc"}], "query": {"bool": {"filter": [
            {"term": {"workspace_id": kb.workspace_id}}, {"term": {"knowledge_base_id": kb.id}},
            {"term": {"document_id": document_id}}, {"exists": {"field": "chunk_id"}}]}}}
        status, found = self.client.call("POST", f"/{index_name(self.prefix, kb.profile)}/_search", body,
                                         operation="export_chunks", accept=(404,))
        if is_index_missing(status, found):
            return []
        sources = [hit["_source"] for hit in found["hits"]["hits"]]
        newest = max((int(src.get("revision") or 0) for src in sources), default=0)
        return [_chunk(src) for src in sources if int(src.get("revision") or 0) == newest]


def _chunk(src: dict[str, Any]) -> Chunk:
    pages = (src.get("tags") or {}).get("pages") or ()
    return Chunk(src["chunk_id"], src["document_id"], int(src["chunk_index"]), src["content"],
                 int(src["token_count"]), src["content_hash"], src.get("embedding"),
                 tuple(pages) if isinstance(pages, list) else (), src.get("context") or "", bool(src.get("secret")))
