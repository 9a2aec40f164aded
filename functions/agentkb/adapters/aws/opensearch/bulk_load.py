"""The OpenSearch index's bulk path (`Index.write_documents`, issue 26): a batch of documents with their vectors
in a few `_bulk` requests instead of two or more per document.

Order, so a crash anywhere leaves each document whole or absent and a re-run stores it once:
1. every name of the batch claimed in the catalog (RevisionConflict before anything is indexed);
2. whatever an earlier, killed run indexed for these documents deleted (one id lookup per index for the whole
   batch: a `terms` filter on the document ids), so nothing is indexed twice;
3. every chunk, then every document record, in `_bulk` requests of BULK_DOCUMENTS' worth of lines;
4. each record committed to the catalog (the commit point a reader trusts), one conditional write each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agentkb.adapters.aws.opensearch.documents import document_record, documents_index, documents_index_body
from agentkb.adapters.aws.opensearch.ops import LOOKUP_PAGE, bulk, ensure_index, lookup_ids
from agentkb.adapters.aws.opensearch.queries import chunk_source, tag_slots
from agentkb.models.domain import Chunk, Document, KnowledgeBase

if TYPE_CHECKING:
    from agentkb.adapters.aws.opensearch.index import OpenSearchIndex

BULK_LINES = 1_000  # lines per _bulk request (500 chunks): well under AOSS's 10 MB request limit at 1,024-d
Items = Sequence[tuple[Document, Sequence[Chunk]]]


def _listed(chunk: Chunk) -> Chunk:
    """The chunk with its vector as a list of floats (an import reads an array('f'): JSON needs a list)."""
    if chunk.embedding is None or isinstance(chunk.embedding, list):
        return chunk
    return replace(chunk, embedding=list(chunk.embedding))


def write_documents(index: OpenSearchIndex, kb: KnowledgeBase, items: Items) -> None:
    if not items:
        return
    for document, _ in items:
        index.registry.claim_revision(document, None)
    name = index.ensure_index(kb.profile)
    records = documents_index(name)
    ensure_index(index.client, records, documents_index_body())
    ids = [document.id for document, _ in items]
    for target, sort in ((name, "chunk_id"), (records, "document_id")):
        _delete(index, target, kb, ids, sort)
    lines: list[dict[str, Any]] = []
    documents: list[dict[str, Any]] = []
    for document, chunks in items:
        slots = tag_slots(kb, document)
        for chunk in chunks:
            lines += [{"index": {"_index": name}}, chunk_source(kb, document, _listed(chunk), slots)]
        documents += [{"index": {"_index": records}}, document_record(kb, document, chunks, slots)]
    for target, batch in ((name, lines), (records, documents)):
        for start in range(0, len(batch), BULK_LINES):
            bulk(index.client, target, batch[start:start + BULK_LINES])
    for document, _ in items:
        index.registry.put_document(document)


def _delete(index: OpenSearchIndex, target: str, kb: KnowledgeBase, document_ids: list[str], sort: str) -> None:
    for start in range(0, len(document_ids), LOOKUP_PAGE):
        filters: list[dict[str, Any]] = [{"term": {"knowledge_base_id": kb.id}},
                   {"terms": {"document_id": document_ids[start:start + LOOKUP_PAGE]}}]
        found = list(lookup_ids(index.client, target, filters, sort))
        for at in range(0, len(found), LOOKUP_PAGE):
            bulk(index.client, target, [{"delete": {"_index": target, "_id": i}} for i in found[at:at + LOOKUP_PAGE]])
