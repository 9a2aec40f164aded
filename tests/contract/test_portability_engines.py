"""Issue 25: a workspace seeded on one engine, exported, imported into the other (embedded <-> AWS on moto and the
in-memory OpenSearch), compared section by section, and asked the same questions. Both engines embed with the same
model (the feature-hashed Titan the AWS suites' Bedrock double answers), so no vector changes on the way."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentkb.api.functions import APPS
from agentkb.composition import Ports, get_ports, reset_ports
from agentkb.config import reset_settings
from agentkb.local.events import body_of, rest_event
from agentkb.services.portability.archive_file import ArchiveReader
from agentkb.services.portability.export import ExportRequest, export_workspace
from agentkb.services.portability.importer import import_archive
from testkit.bedrock import hashed_embedding
from testkit.corpus import KB, WS, mint, replay, seed

RECALL = json.loads(json.loads((Path(__file__).resolve().parents[2] / "events/recall/recall_ok.json")
                               .read_text())["body"])


class SameModel:
    """Titan Text Embeddings v2 as the Bedrock double answers it, on both engines."""

    model_id = "amazon.titan-embed-text-v2:0"
    dimension = 256

    def embed_query(self, text: str) -> list[float]:
        return hashed_embedding(text, self.dimension)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [hashed_embedding(t, self.dimension) for t in texts]


def use_engine(monkeypatch: pytest.MonkeyPatch, backend: str, data: Path) -> Ports:
    """The engine every CLI-free call and every handler of this process uses from now on."""
    monkeypatch.setenv("AGENTKB_BACKEND", backend)
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(data))
    reset_settings()
    reset_ports()
    bundle = get_ports().replace(embedder=SameModel())
    assert bundle.builder.engine.name == backend
    for app in APPS.values():
        monkeypatch.setitem(app().dependency_overrides, get_ports, lambda: bundle)
    return bundle


def sections(path: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for section, record in ArchiveReader(path).records():
        out.setdefault(section, []).append(record)
    out.pop("keys", None)  # keys are not imported: each engine holds its own
    return out


def answers(ports: Ports, snapshot_id: str) -> dict[str, Any]:
    """What a client sees, engine-independent: which documents, memories and entities come back, the snapshot's
    exact bytes."""
    key = mint(ports, [WS], ["api:read"], "checker")
    search = body_of(replay(rest_event("POST", "/api/v2/knowledge/search", {
        "workspaceId": WS, "knowledgeBaseIds": [KB], "query": "reset password"}, key=key)))
    recall = body_of(replay(rest_event("POST", "/v1/recall", {**RECALL, "workspace_id": WS}, key=key)))
    graph = body_of(replay(rest_event("POST", "/v1/graph/search", {"workspaceId": WS, "query": "vpn"}, key=key)))
    snapshot = replay(rest_event("GET", f"/v1/snapshots/{snapshot_id}", key=key))
    out = {"documents": sorted({r["documentId"] for r in search["data"]["results"]}),
           "memories": sorted(r["memory_id"] for r in recall["results"]),
           "entities": sorted(e["id"] for e in graph["entities"]), "snapshot": snapshot["body"]}
    assert all(out.values()), out  # answers worth comparing
    return out


@pytest.mark.parametrize(("source", "target"), [("embedded", "aws"), ("aws", "embedded")])
def test_a_workspace_moves_between_engines(source: str, target: str, aws_backend: Any, data_dir: Path,
                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ports = use_engine(monkeypatch, source, tmp_path / "source")
    seed(ports, snapshot=True)
    snapshot_id = next(iter(ports.archive.snapshot_ids(WS)))
    before = answers(ports, snapshot_id)
    archive = tmp_path / "ws.jsonl"
    with archive.open("w", encoding="utf-8") as out:
        export_workspace(ports, ExportRequest(WS), out, source)

    ports = use_engine(monkeypatch, target, tmp_path / "target")
    report = import_archive(ports, archive).as_dict()
    assert report["changed"] and report["reembeddedChunks"] == 0
    assert all(s["verified"] for name, s in report["sections"].items() if name != "keys"), report
    again = tmp_path / "again.jsonl"
    with again.open("w", encoding="utf-8") as out:
        export_workspace(ports, ExportRequest(WS), out, target)
    assert sections(again) == sections(archive)
    assert answers(ports, snapshot_id) == before
    second = import_archive(ports, archive).as_dict()
    assert not second["changed"], second


class LocalModel(SameModel):
    """What the embedded engine would embed with: another model id and dimension than the stack's."""

    model_id = "sentence-transformers/all-MiniLM-L6-v2"
    dimension = 64


def test_a_workspace_moving_up_is_re_embedded_by_the_stack(aws_backend: Any, data_dir: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkb.local.operator import OPERATOR, deps
    from agentkb.models.domain import IndexQuery
    from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest
    from agentkb.services.ingest import service as ingest

    local = use_engine(monkeypatch, "embedded", tmp_path / "source").replace(embedder=LocalModel())
    kb = ingest.create_knowledge_base(CreateKnowledgeBaseRequest(workspaceId="ws1", name="kb"), OPERATOR, deps(local))
    ingest.add_document(kb.id, AddDocumentRequest(workspaceId="ws1", name="pay.md", content=(
        "# Payments\n\nFailed payments are retried three times.")), OPERATOR, deps(local))
    archive = tmp_path / "ws.jsonl"
    with archive.open("w", encoding="utf-8") as out:
        export_workspace(local, ExportRequest("ws1"), out, "embedded")

    stack = use_engine(monkeypatch, "aws", tmp_path / "unused")
    report = import_archive(stack, archive).as_dict()
    assert report["reembeddedChunks"] == 1
    assert all(s["verified"] for name, s in report["sections"].items() if name != "keys"), report
    moved = stack.catalog.get_knowledge_base("ws1", kb.id)
    assert moved is not None and (moved.profile.model, moved.profile.dimension) == (SameModel.model_id, 256)
    document_id = stack.catalog.list_documents(kb.id, 1)[0][0].id
    (chunk,) = stack.archive.document_chunks(moved, [document_id])[document_id]
    assert chunk.embedding == pytest.approx(hashed_embedding(f"{chunk.context}\n{chunk.content}", 256), abs=1e-6)
    hits = stack.index.vector_search(IndexQuery("ws1", (kb.id,), vector=SameModel().embed_query(
        f"{chunk.context}\n{chunk.content}"), limit_per_kb=3))
    assert hits and hits[0].chunk_id == chunk.id
