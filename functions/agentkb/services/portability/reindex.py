"""`agentkb kb reindex`: rebuild a knowledge base's chunks and vectors from the catalog's records of its documents.

Each document is re-chunked from the text the catalog keeps (DynamoDB on AWS, SQLite embedded), embedded again by
the configured embedder (the embedding cache is bypassed) and written as the same revision, one document at a time:
searches keep answering from every other document meanwhile. On AWS this rebuilds a KB's OpenSearch index when
the collection was lost or replaced. A document stored before its text was kept is re-embedded from its stored
chunks instead. The KB keeps its embedding profile: moving it to another profile in place (old vectors serving
until the new ones are complete) is not built; export and import into an engine configured with the new model
re-embeds instead (docs/portability.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from agentkb.errors import BadRequest, Conflict, NotFound, RevisionConflict
from agentkb.models.domain import Document, EmbeddingProfile, KnowledgeBase
from agentkb.services.ingest.service import IngestDeps, _chunks, prepare

if TYPE_CHECKING:
    from agentkb.composition import Ports

PAGE = 100


def reindex_kb(ports: Ports, workspace_id: str, kb_ref: str, model: str | None = None,
               progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Rebuild every document of the KB; counts of documents and chunks written."""
    kb = ports.catalog.get_knowledge_base(workspace_id, kb_ref) or ports.catalog.find_knowledge_base_by_name(
        workspace_id, kb_ref)
    if kb is None:
        raise NotFound(f"No knowledge base {kb_ref!r} in workspace {workspace_id!r}")
    target = EmbeddingProfile(ports.embedder.model_id, ports.embedder.dimension)
    if model is not None and model != target.model:
        raise BadRequest(f"This deployment embeds with {target.model}, not {model}",
                         details=[{"path": "--embedding-model", "message": f"use {target.model}"}])
    if kb.profile != target:
        raise Conflict(f"The knowledge base is embedded with {kb.profile.model} ({kb.profile.dimension}-d) and this "
                       f"deployment with {target.model} ({target.dimension}-d): an in-place switch is not built; "
                       "export the workspace and import it into the engine configured with the new model")
    deps = IngestDeps(ports.catalog, ports.index, ports.embedder, ports.tokenizer, None)
    counts = {"documents": 0, "chunks": 0}
    cursor: str | None = None
    while True:
        page, cursor = ports.catalog.list_documents(kb.id, PAGE, cursor)
        for document in page:
            counts["chunks"] += _rebuild(ports, deps, kb, document)
            counts["documents"] += 1
            if progress:
                progress(1)
        if cursor is None:
            return counts


def _rebuild(ports: Ports, deps: IngestDeps, kb: KnowledgeBase, document: Document) -> int:
    content = ports.catalog.document_content(kb.id, document.id)
    if content:
        pieces, vectors = prepare(deps, kb, content)
        chunks = _chunks(document, pieces, vectors)
    else:  # stored before documents kept their text: the chunks are the record
        stored = ports.archive.document_chunks(kb, document.id)
        texts = [f"{c.context}\n{c.content}" if c.context else c.content for c in stored]
        fresh = ports.embedder.embed_documents(texts) if texts else []
        chunks = [replace(c, embedding=v) for c, v in zip(stored, fresh, strict=True)]
    try:
        ports.index.write_document(kb, replace(document, content=content, chunk_count=len(chunks)), chunks,
                                   replaces=document.revision)
    except RevisionConflict:  # a newer revision was written meanwhile, embedded with the same profile: it stays
        return 0
    return len(chunks)
