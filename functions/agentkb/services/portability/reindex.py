"""`agentkb kb reindex`: re-embed a knowledge base, under its own profile or in place under another.

Under the KB's own profile each document is re-chunked from the text the catalog keeps (DynamoDB on AWS, SQLite
embedded), embedded again (the embedding cache is bypassed) and written as the same revision, one document at a
time: searches keep answering from every other document meanwhile. On AWS this rebuilds a KB's OpenSearch index
when the collection was lost or replaced. A document stored before its text was kept is re-embedded from its
stored chunks instead.

Under another profile (`--embedding-model M`, or a deployment now configured with another model) it is a switch
without downtime (docs/portability.md): the pending target is recorded, every live chunk is embedded under it into
a shadow generation that searches do not read (resumable: a re-run skips the documents already staged at their
revision), documents written or deleted meanwhile are caught up, then the KB's profile and its live vectors change
in one step, documents written across that step are rebuilt, and the old generation is dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from agentkb.errors import BadRequest, Conflict, NotFound, RevisionConflict
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase
from agentkb.ports.embedding import Embedder
from agentkb.services.ingest.service import IngestDeps, _chunks, prepare

if TYPE_CHECKING:
    from agentkb.composition import Ports

PAGE = 100
SWITCH_ROUNDS = 5  # catch-up passes before the switch gives up on a KB that keeps being written (then: re-run)


def reindex_kb(ports: Ports, workspace_id: str, kb_ref: str, model: str | None = None,
               progress: Callable[[int], None] | None = None) -> dict[str, int]:
    """Re-embed every document of the KB under the profile of `model` (default: the configured embedder's);
    counts of documents and chunks written, and `switched` 1 when the KB moved to another profile."""
    kb = ports.catalog.get_knowledge_base(workspace_id, kb_ref) or ports.catalog.find_knowledge_base_by_name(
        workspace_id, kb_ref)
    if kb is None:
        raise NotFound(f"No knowledge base {kb_ref!r} in workspace {workspace_id!r}")
    embedder = target_embedder(ports, model)
    target = EmbeddingProfile(embedder.model_id, embedder.dimension)
    leftover = ports.generations.leftover(kb)
    if leftover is not None:  # an earlier switch was killed before its drop finished: finish it first
        ports.generations.drop(kb, leftover)
    pending = ports.generations.pending(kb)
    if kb.profile == target and pending is None:
        return _rebuild_all(ports, kb, embedder, progress)
    return _switch(ports, kb, embedder, target, progress)


def target_embedder(ports: Ports, model: str | None) -> Embedder:
    """The embedder `--embedding-model` names (`model` or `model@dimension`); 400 when the deployment has none."""
    configured = ports.embedder
    if model is None:
        return configured
    name, _, suffix = model.rpartition("@")
    if not name or not suffix.isdigit():
        name, suffix = model, ""
    dimension = int(suffix) if suffix else None
    if name == configured.model_id and dimension in (None, configured.dimension):
        return configured
    other = ports.embedders.embedder_for(name, dimension)
    if other is None:
        raise BadRequest(f"This deployment cannot embed with {model}",
                         details=[{"path": "--embedding-model", "message": f"use {configured.model_id}@"
                                   f"{configured.dimension} or another model this deployment can build"}])
    return other


def _documents(ports: Ports, kb: KnowledgeBase) -> Iterator[Document]:
    cursor: str | None = None
    while True:
        page, cursor = ports.catalog.list_documents(kb.id, PAGE, cursor)
        yield from page
        if cursor is None:
            return


def _rebuild_all(ports: Ports, kb: KnowledgeBase, embedder: Embedder,
                 progress: Callable[[int], None] | None) -> dict[str, int]:
    counts = {"documents": 0, "chunks": 0}
    for document in _documents(ports, kb):
        counts["chunks"] += _rebuild(ports, kb, embedder, document)
        counts["documents"] += 1
        if progress:
            progress(1)
    return counts


def _rebuild(ports: Ports, kb: KnowledgeBase, embedder: Embedder, document: Document) -> int:
    content = ports.catalog.document_content(kb.id, document.id)
    if content:
        deps = IngestDeps(ports.catalog, ports.index, embedder, ports.tokenizer, None)
        pieces, vectors = prepare(deps, kb, content)
        chunks = _chunks(document, pieces, vectors)
    else:  # stored before documents kept their text: the chunks are the record
        chunks = _reembedded(ports.archive.document_chunks(kb, [document.id]).get(document.id, []), embedder)
    try:
        ports.index.write_document(kb, replace(document, content=content, chunk_count=len(chunks)), chunks,
                                   replaces=document.revision)
    except RevisionConflict:  # a newer revision was written meanwhile, embedded with the same profile: it stays
        return 0
    return len(chunks)


def _reembedded(stored: list[Chunk], embedder: Embedder) -> list[Chunk]:
    texts = [f"{c.context}\n{c.content}" if c.context else c.content for c in stored]
    fresh = embedder.embed_documents(texts) if texts else []
    return [replace(c, embedding=v) for c, v in zip(stored, fresh, strict=True)]


def _switch(ports: Ports, kb: KnowledgeBase, embedder: Embedder, target: EmbeddingProfile,
            progress: Callable[[int], None] | None) -> dict[str, int]:
    generations = ports.generations
    generations.begin(kb, target)  # Conflict when a switch to another profile is pending
    staged = generations.staged(kb, target)
    counts = {"documents": 0, "chunks": 0, "resumed": 0, "caughtUp": 0, "switched": 1}
    for document in _documents(ports, kb):
        if staged.get(document.id) == document.revision:
            counts["resumed"] += 1
        else:
            counts["chunks"] += _stage(ports, kb, embedder, target, document)
            staged[document.id] = document.revision
        counts["documents"] += 1
        if progress:
            progress(1)
    live = {d.id for d in _documents(ports, kb)}
    for gone in sorted(set(staged) - live):  # deleted during the reindex
        generations.unstage(kb, target, gone)
        del staged[gone]
    for _ in range(SWITCH_ROUNDS):
        missing = generations.switch(kb, target)
        if not missing:
            break
        for document_id in missing:  # written (or deleted) meanwhile: staged again at its current revision
            current = ports.catalog.get_document(kb.id, document_id)
            if current is None:
                generations.unstage(kb, target, document_id)
                continue
            counts["chunks"] += _stage(ports, kb, embedder, target, current)
            staged[document_id] = current.revision
            counts["caughtUp"] += 1
    else:
        raise Conflict("The knowledge base kept changing while it was re-embedded: the switch is still pending "
                       "and searches answer from the old profile; run the same reindex again")
    switched = replace(kb, profile=target)
    for document in _documents(ports, switched):  # written across the switch by a writer on the old profile
        if staged.get(document.id) != document.revision:
            counts["chunks"] += _rebuild(ports, switched, embedder, document)
            counts["caughtUp"] += 1
    time.sleep(generations.settle_s)  # searches in flight across the switch finish on the old generation
    generations.drop(switched, kb.profile)
    return counts


def _stage(ports: Ports, kb: KnowledgeBase, embedder: Embedder, target: EmbeddingProfile, document: Document) -> int:
    """The document's live chunks embedded under `target`, written into the shadow generation (from its stored
    text when the index lost its chunks)."""
    chunks = _reembedded(ports.archive.document_chunks(kb, [document.id]).get(document.id, []), embedder)
    if not chunks:
        content = ports.catalog.document_content(kb.id, document.id)
        if content:
            deps = IngestDeps(ports.catalog, ports.index, embedder, ports.tokenizer, None)
            pieces, vectors = prepare(deps, replace(kb, profile=target), content)
            chunks = _chunks(document, pieces, vectors)
    ports.generations.stage(kb, target, document, chunks)
    return len(chunks)
