"""`agentkb export`: every record of a workspace, read through the ports page by page, written as one archive.

Memory stays flat with the workspace's size: documents, memories, the graph's entities, relations and proofs,
snapshots and traces are read a page at a time and written as they come.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from agentkb.errors import NotFound
from agentkb.models.domain import Chunk, Document, KnowledgeBase
from agentkb.models.graph.records import RelationRecord
from agentkb.services.portability import records as rec
from agentkb.services.portability.archive_file import ArchiveWriter
from agentkb.services.portability.records import Record

if TYPE_CHECKING:
    from agentkb.composition import Ports

PAGE = 200
CHUNKS_PER_READ = 2_000  # ~5 MB of 384-d chunks a read (each document's text and chunks by ids: _by_chunks)


@dataclass(frozen=True)
class ExportRequest:
    workspace_id: str
    kb_names: tuple[str, ...] = ()  # empty: every knowledge base of the workspace


def workspace_records(ports: Ports, request: ExportRequest) -> Iterator[tuple[str, Record]]:
    """(section, record) of everything the workspace holds, in archive order."""
    for section, item in workspace_items(ports, request):
        yield section, rec.chunk_record(item) if isinstance(item, Chunk) else item


def workspace_items(ports: Ports, request: ExportRequest) -> Iterator[tuple[str, Record | Chunk]]:
    """workspace_records with each chunk as the Chunk read (its record's texts are made from it directly:
    records.chunk_texts_of)."""
    ws = request.workspace_id
    for kb in select_kbs(ports, request):
        yield "knowledge_bases", rec.kb_record(kb)
        yield from _documents(ports, kb)
    yield from _memories(ports, ws)
    yield from _graph(ports, ws)
    yield from _snapshots(ports, ws)
    yield from _paged_traces(ports, ws)
    for key in ports.keys.list_keys():
        if ws in key.workspaces:
            yield "keys", rec.key_record(key)


def select_kbs(ports: Ports, request: ExportRequest) -> list[KnowledgeBase]:
    kbs = sorted(ports.catalog.list_knowledge_bases(request.workspace_id), key=lambda kb: kb.id)
    if not request.kb_names:
        return kbs
    by_name = {kb.name: kb for kb in kbs} | {kb.id: kb for kb in kbs}
    missing = [name for name in request.kb_names if name not in by_name]
    if missing:
        raise NotFound(f"No knowledge base {missing[0]!r} in workspace {request.workspace_id!r}")
    chosen = {by_name[name].id: by_name[name] for name in request.kb_names}
    return [chosen[kb_id] for kb_id in sorted(chosen)]


def _documents(ports: Ports, kb: KnowledgeBase) -> Iterator[tuple[str, Record | Chunk]]:
    cursor: str | None = None
    while True:
        page, cursor = ports.catalog.list_documents(kb.id, PAGE, cursor)
        for group in _by_chunks(page):
            ids = [d.id for d in group]
            texts, chunks = ports.catalog.document_contents(kb.id, ids), ports.archive.document_chunks(kb, ids)
            for document in group:
                yield "documents", rec.document_record(document, texts.get(document.id))
                yield from (("chunks", chunk) for chunk in chunks.get(document.id, ()))
        if cursor is None:
            return


def _by_chunks(page: Sequence[Document]) -> Iterator[Sequence[Document]]:
    """Consecutive documents of a page whose chunks (by their registered counts) are read together: at most
    CHUNKS_PER_READ in a read, or one document with more (what a read holds stays bounded however big they are)."""
    start, chunks = 0, 0
    for at, document in enumerate(page):
        if at > start and chunks + document.chunk_count > CHUNKS_PER_READ:
            yield page[start:at]
            start, chunks = at, 0
        chunks += document.chunk_count
    if start < len(page):
        yield page[start:]


def _memories(ports: Ports, ws: str) -> Iterator[tuple[str, Record]]:
    after = 0
    while page := ports.archive.memories(ws, after, PAGE):
        for memory in page:
            yield "memories", rec.memory_record(memory)
        after = page[-1].detail.memory_id


def _graph(ports: Ports, ws: str) -> Iterator[tuple[str, Record]]:
    graph = ports.graph
    for entity_ids in _id_pages(lambda after: graph.export_ids(ws, "entities", after, PAGE)):
        for entity in sorted(graph.entities(ws, entity_ids), key=lambda e: e.id):
            yield "graph_entities", rec.entity_record(entity)
    after = ""
    while relations := graph.export_relations(ws, after, PAGE):
        for relation in relations:
            yield "graph_relations", _relation(relation)
        after = relations[-1].id
    for proof_ids in _id_pages(lambda after: graph.export_ids(ws, "proofs", after, PAGE)):
        for proof in sorted(graph.proofs(ws, proof_ids), key=lambda p: p.id):
            yield "graph_proofs", asdict(proof)


def _id_pages(page: Callable[[str], list[str]]) -> Iterator[list[str]]:
    """Pages of ids in id order, each asked for after the last id of the one before."""
    after = ""
    while ids := page(after):
        yield ids
        after = ids[-1]


def _relation(relation: RelationRecord) -> Record:
    out = asdict(relation)
    out["proof_ids"] = list(relation.proof_ids)
    return out


def _snapshots(ports: Ports, ws: str) -> Iterator[tuple[str, Record]]:
    for snapshot_id in ports.archive.snapshot_ids(ws):
        snapshot = ports.snapshots.get(snapshot_id)
        if snapshot is not None:
            yield "snapshots", rec.snapshot_record(snapshot)


def _paged_traces(ports: Ports, ws: str) -> Iterator[tuple[str, Record]]:
    for trace in ports.archive.traces(ws):
        yield "traces", rec.trace_record(trace)


def export_workspace(ports: Ports, request: ExportRequest, writer_out: Any,
                     engine: str, sections: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Write the archive of the workspace to `writer_out`; returns its manifest."""
    writer = ArchiveWriter(writer_out, {"workspace": request.workspace_id, "engine": engine,
                                        "knowledge_bases": list(request.kb_names),  # memories are embedded by it:
                                        "embedder": {"model": ports.embedder.model_id,
                                                     "dimension": ports.embedder.dimension}})
    for section, item in workspace_items(ports, request):
        if sections is None or section in sections:
            writer.write(section, item)
    return writer.finish()
