"""Where the importer's records go: each section written through the target's ports, idempotently.

Every write is keyed by the record's own id and skipped when the target holds it already, so importing an archive
again writes nothing and an import killed halfway finishes on the next run without writing anything twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from agentkb.errors import Conflict
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase
from agentkb.models.graph.records import GraphBatch
from agentkb.ports.archive import ArchivedMemory, ArchivedTrace
from agentkb.services.portability import records as rec
from agentkb.services.portability.records import Record

if TYPE_CHECKING:
    from agentkb.composition import Ports

EMBED_BATCH = 256  # chunk texts per embedder call when re-embedding: whole batches of the embedders' own size
BULK_CHUNKS = 5_000  # chunks per Index.write_documents call (embedded: one transaction; about 12 MB held)
MEMORY_PAGE = 200
GRAPH_PAGE = 1_000  # graph records per upsert: entities come first in an archive, so a page's relations find theirs


@dataclass
class Tally:
    """Per section: records written (new) and records the target held already."""

    written: dict[str, int] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)
    reembedded: int = 0
    reembedded_memories: int = 0

    def add(self, section: str, written: int, present: int = 0) -> None:
        self.written[section] = self.written.get(section, 0) + written
        self.present[section] = self.present.get(section, 0) + present


@dataclass
class _Pending:
    kb: KnowledgeBase
    document: Document
    chunks: list[Chunk] = field(default_factory=list)


class DocumentSink:
    """Knowledge bases, then their documents with their chunks, written through the index's bulk path
    (`Index.write_documents`, BULK_CHUNKS at a time: each document whole or absent); chunks of a knowledge base
    whose target profile differs are re-embedded by the target's embedder first, EMBED_BATCH at a time."""

    def __init__(self, ports: Ports, workspace_id: str, tally: Tally, progress: Callable[[int], None]) -> None:
        self.ports, self.ws, self.tally, self.progress = ports, workspace_id, tally, progress
        self.kbs: dict[str, KnowledgeBase] = {}
        self.reembed: set[str] = set()
        self.current: _Pending | None = None
        self.waiting: list[_Pending] = []  # documents whose chunks await embedding
        self.batch: list[_Pending] = []  # documents ready for the next bulk write (all of one knowledge base)
        self.batch_chunks = 0
        self.created: set[str] = set()  # KBs this run created: none of the archive's documents can be in them yet

    def knowledge_base(self, record: Record) -> None:
        self.finish()  # a bulk write holds one knowledge base's documents
        target = EmbeddingProfile(self.ports.embedder.model_id, self.ports.embedder.dimension)
        existing = self.ports.catalog.get_knowledge_base(self.ws, record["id"])
        if existing is None:
            named = self.ports.catalog.find_knowledge_base_by_name(self.ws, record["name"])
            if named is not None:
                raise Conflict(f"The target workspace has another knowledge base named {record['name']!r}")
            existing = rec.kb_from(record, self.ws, target)
            self.ports.catalog.create_knowledge_base(existing)
            self.created.add(existing.id)
            self.tally.add("knowledge_bases", 1)
        else:
            self.tally.add("knowledge_bases", 0, 1)
        self.kbs[existing.id] = existing
        if existing.profile != rec.kb_from(record, self.ws).profile:
            self.reembed.add(existing.id)

    def document(self, record: Record) -> None:
        self.close_document()
        document = rec.document_from(record, self.ws)
        kb = self.kbs[document.knowledge_base_id]
        stored = None if kb.id in self.created else self.ports.catalog.get_document(kb.id, document.id)
        if stored is not None and stored.revision >= document.revision:
            self.tally.add("documents", 0, 1)
            self.current = _Pending(kb, replace(document, chunk_count=-1))  # its chunks are skipped too
            return
        self.current = _Pending(kb, document)

    def chunk(self, record: Record) -> None:
        assert self.current is not None, "a chunk record follows its document's"
        if self.current.document.chunk_count < 0:
            self.tally.add("chunks", 0, 1)
            return
        self.current.chunks.append(rec.chunk_from(record))

    def close_document(self) -> None:
        pending, self.current = self.current, None
        if pending is None or pending.document.chunk_count < 0:
            return
        if pending.kb.id not in self.reembed:
            self._write(pending)
            return
        self.waiting.append(pending)
        if sum(len(p.chunks) for p in self.waiting) >= EMBED_BATCH:
            self.flush_embeddings()

    def flush_embeddings(self) -> None:
        waiting, self.waiting = self.waiting, []
        chunks = [c for p in waiting for c in p.chunks]
        vectors: list[list[float]] = []
        for start in range(0, len(chunks), EMBED_BATCH):
            batch = chunks[start:start + EMBED_BATCH]
            vectors.extend(self.ports.embedder.embed_documents(
                [f"{c.context}\n{c.content}" if c.context else c.content for c in batch]))
            self.progress(len(batch))
        self.tally.reembedded += len(chunks)
        it = iter(vectors)
        for pending in waiting:
            pending.chunks = [replace(c, embedding=next(it)) for c in pending.chunks]
            self._write(pending)

    def finish(self) -> None:
        self.close_document()
        self.flush_embeddings()
        self.flush_batch()

    def _write(self, pending: _Pending) -> None:
        self.batch.append(pending)
        self.batch_chunks += len(pending.chunks)
        if self.batch_chunks >= BULK_CHUNKS:
            self.flush_batch()

    def flush_batch(self) -> None:
        (batch, self.batch), (chunks, self.batch_chunks) = (self.batch, []), (self.batch_chunks, 0)
        if not batch:
            return
        self.ports.index.write_documents(batch[0].kb, [(p.document, p.chunks) for p in batch])
        self.tally.add("documents", len(batch))
        self.tally.add("chunks", chunks)


class RecordSink:
    """Memories, graph, snapshots and traces: buffered a page at a time (memory stays flat with the archive's
    size), written by id."""

    def __init__(self, ports: Ports, workspace_id: str, tally: Tally, reembed_memories: bool = False) -> None:
        self.ports, self.ws, self.tally = ports, workspace_id, tally
        self.reembed_memories = reembed_memories  # the archive's memories were embedded under another profile
        self.memories: list[ArchivedMemory] = []
        self.traces: list[ArchivedTrace] = []
        self.graph: dict[str, list[Record]] = {"graph_entities": [], "graph_relations": [], "graph_proofs": []}

    def add(self, section: str, record: Record) -> None:
        if section == "memories":
            self.memories.append(rec.memory_from(record, self.ws))
            if len(self.memories) >= MEMORY_PAGE:
                self.flush_memories()
        elif section in self.graph:
            self.graph[section].append(record)
            if sum(len(items) for items in self.graph.values()) >= GRAPH_PAGE:
                self._flush_graph()
        elif section == "snapshots":
            self._snapshot(record)
        elif section == "traces":
            self.traces.append(rec.trace_from(record, self.ws))
            if len(self.traces) >= MEMORY_PAGE:
                self.flush_traces()
        elif section == "keys":
            self.tally.add("keys", 0)  # metadata only: a key without its secret cannot be recreated

    def flush_memories(self) -> None:
        if not self.memories:
            return
        batch, self.memories = self.memories, []
        if self.reembed_memories or any(len(m.embedding) != self.ports.embedder.dimension for m in batch):
            batch = self._reembedded(batch)  # another profile, or vectors the target's leg could not compare
        new = self.ports.archive.put_memories(self.ws, batch)
        self.tally.add("memories", new, len(batch) - new)

    def _reembedded(self, batch: list[ArchivedMemory]) -> list[ArchivedMemory]:
        """The memories the target does not hold yet, with vectors of the target's embedder made of what the /v1
        write path embeds (name, description, body)."""
        held = set(self.ports.memories.get_many(self.ws, [m.detail.memory_id for m in batch]))
        fresh = [m for m in batch if m.detail.memory_id not in held]
        texts = ["\n".join(p for p in (m.detail.name, m.detail.description, m.detail.body) if p) for m in fresh]
        vectors = self.ports.embedder.embed_documents(texts) if texts else []
        self.tally.reembedded_memories += len(fresh)
        self.tally.add("memories", 0, len(batch) - len(fresh))
        return [replace(m, embedding=v) for m, v in zip(fresh, vectors, strict=True)]

    def flush_traces(self) -> None:
        if not self.traces:
            return
        batch, self.traces = self.traces, []
        new = self.ports.archive.put_traces(batch)
        self.tally.add("traces", new, len(batch) - new)

    def _snapshot(self, record: Record) -> None:
        snapshot = rec.snapshot_from(record, self.ws)
        if self.ports.snapshots.get(snapshot.snapshot_id) is not None:
            self.tally.add("snapshots", 0, 1)
            return
        self.ports.snapshots.put_if_absent(snapshot)
        self.tally.add("snapshots", 1)

    def finish(self) -> None:
        self.flush_memories()
        self.flush_traces()
        self._flush_graph()

    def _flush_graph(self) -> None:
        held, self.graph = self.graph, {name: [] for name in self.graph}
        entities = [rec.entity_from(r) for r in held["graph_entities"]]
        relations = [rec.relation_from(r) for r in held["graph_relations"]]
        proofs = [rec.proof_from(r) for r in held["graph_proofs"]]
        if not (entities or relations or proofs):
            return
        counts = self.ports.graph.upsert(self.ws, GraphBatch(tuple(entities), tuple(relations), tuple(proofs)))
        for section, items in (("graph_entities", entities), ("graph_relations", relations), ("graph_proofs", proofs)):
            # upsert by id bumps nothing when stored content is unchanged: then every record was present already
            written = len(items) if counts.changed else 0
            self.tally.add(section, written, len(items) - written)
