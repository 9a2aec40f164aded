"""Issue 25: an archive embedded under one profile, imported where the embedder is another, is re-embedded by the
target's embedder in whole batches; texts, ids and tags arrive unchanged, the vectors are the target model's."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.local.operator import OPERATOR, deps
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
from agentkb.models.memory.api import MemoryWriteRequest
from agentkb.models.search import KnowledgeSearchRequest
from agentkb.services.ingest import service as ingest
from agentkb.services.memory.service import MemoryDeps, write_memory
from agentkb.services.portability import sinks
from agentkb.services.portability.export import ExportRequest, export_workspace
from agentkb.services.portability.importer import import_archive
from agentkb.services.search.service import SearchDeps, search_knowledge
from testkit.bedrock import hashed_embedding


class Hashed:
    """A deterministic embedder of its own model id and dimension; records every batch it is given."""

    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id, self.dimension, self.batches = model_id, dimension, []  # type: ignore[var-annotated]

    def embed_query(self, text: str) -> list[float]:
        return hashed_embedding(text, self.dimension)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        return [hashed_embedding(t, self.dimension) for t in texts]


def _seed(tmp_path: Path) -> tuple[Path, int]:
    ports = get_ports().replace(embedder=Hashed("model-a", 8))
    kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId="ws1", name="kb"), OPERATOR, deps(ports))
    for i in range(5):
        text = "\n\n".join(f"## Part {j}\n" + " ".join(f"word{i}x{j}x{k}" for k in range(120)) for j in range(4))
        ingest.add_document(kb.id, AddDocumentRequest(workspaceId="ws1", name=f"d{i}.md", content=text,
                                                      tags=None), OPERATOR, deps(ports))
    memory = MemoryWriteRequest.model_validate({"workspace_id": "ws1", "visibility": "workspace", "type": "decision",
                                                "name": "rollout", "body": "The rollout finishes on Friday."})
    write_memory(memory, OPERATOR, MemoryDeps(ports.memories, ports.graph, ports.embedder))
    out = io.StringIO()
    manifest = export_workspace(ports, ExportRequest("ws1"), out, "embedded")
    path = tmp_path / "a.jsonl"
    path.write_text(out.getvalue(), encoding="utf-8")
    return path, int(manifest["chunks"]["count"])


def test_a_different_profile_is_re_embedded_in_whole_batches(tmp_path: Path, data_dir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    archive, chunks = _seed(tmp_path)
    assert chunks > 8
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(tmp_path / "target"))
    reset_settings()
    reset_ports()
    monkeypatch.setattr(sinks, "EMBED_BATCH", 4)
    target = Hashed("model-b", 16)
    ports = get_ports().replace(embedder=target)
    progress: list[int] = []
    report = import_archive(ports, archive, progress=lambda done, total: progress.append(done))
    assert report.tally.reembedded == chunks == sum(target.batches[:-1]) == sum(progress)
    chunk_batches = target.batches[:-1]
    assert all(size == 4 for size in chunk_batches[:-1]) and 0 < chunk_batches[-1] <= 4
    assert {"knowledge_bases", "documents", "chunks", "memories"} <= set(report.verified)  # digests without vectors
    assert report.tally.reembedded_memories == 1
    (memory,) = ports.archive.memories("ws1", 0, 10)
    assert memory.embedding == pytest.approx(hashed_embedding("rollout\nThe rollout finishes on Friday.", 16),
                                             abs=1e-6)
    assert target.batches[-1] == 1  # the memory's own batch, after the chunks
    kb = ports.catalog.list_knowledge_bases("ws1")[0]
    assert (kb.profile.model, kb.profile.dimension) == ("model-b", 16)
    document_id = ports.catalog.list_documents(kb.id, 1)[0][0].id
    stored = ports.archive.document_chunks(kb, [document_id])[document_id]
    text = f"{stored[0].context}\n{stored[0].content}" if stored[0].context else stored[0].content
    assert stored[0].embedding == pytest.approx(hashed_embedding(text, 16), abs=1e-6)
    found = _search(ports, kb.id, text)  # its own text: cosine 1 under the new vectors, so it ranks first
    assert found[0] == ports.catalog.list_documents(kb.id, 1)[0][0].name


def _search(ports: Any, kb_id: str, query: str) -> list[str | None]:
    request = KnowledgeSearchRequest(workspaceId="ws1", knowledgeBaseIds=[kb_id], query=query, searchMode="vector")
    outcome = search_knowledge(request, OPERATOR, SearchDeps(ports.catalog, ports.index, ports.embedder,
                                                             ports.reranker))
    return [r.documentName for r in outcome.data.results]
