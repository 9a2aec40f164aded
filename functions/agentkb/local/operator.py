"""Operator actions behind the CLI: create knowledge bases, ingest files and folders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentkb.composition import Ports
from agentkb.errors import BadRequest, NotFound
from agentkb.local.ingest_files import discover, read_sources
from agentkb.models.domain import KnowledgeBase, Principal
from agentkb.models.ingest import CreateKnowledgeBaseRequest, TagDefinitionInput
from agentkb.services.ingest import bulk as bulk_ingest
from agentkb.services.ingest import service as ingest
from agentkb.services.ingest.bulk import IngestSummary, ingest_documents
from agentkb.services.ingest.service import IngestDeps

OPERATOR = Principal(id="operator", workspaces=("*",), scopes=("api:read", "api:write"))


def deps(ports: Ports) -> IngestDeps:
    return IngestDeps(ports.catalog, ports.index, ports.embedder, ports.tokenizer,
                      ports.embedding_cache, embedders=ports.embedders)


def create_kb(ports: Ports, workspace: str, name: str, description: str | None, tags: list[str]) -> KnowledgeBase:
    definitions = []
    for spec in tags:
        tag_name, _, field_type = spec.rpartition(":")
        if not tag_name or field_type not in ("text", "number", "date", "boolean"):
            raise BadRequest(f"invalid --tag {spec!r}: expected NAME:text|number|date|boolean")
        definitions.append(TagDefinitionInput(tagName=tag_name, fieldType=field_type))  # type: ignore[arg-type]
    request = CreateKnowledgeBaseRequest(workspaceId=workspace, name=name, description=description,
                                         tagDefinitions=definitions or None)
    return ingest.create_knowledge_base(request, OPERATOR, deps(ports))


def resolve_kb(ports: Ports, workspace: str, ref: str) -> KnowledgeBase:
    kb = ports.catalog.get_knowledge_base(workspace, ref) or ports.catalog.find_knowledge_base_by_name(
        workspace, ref)
    if kb is None:
        raise NotFound(f"no knowledge base {ref!r} in workspace {workspace!r}")
    return kb


def ingest_paths(ports: Ports, workspace: str, kb_ref: str, paths: list[Path], progress: bool = True,
                 replace: bool = False, prune: bool = False) -> dict[str, Any]:
    """Ingest files and folders into a KB (see services/bulk_ingest); returns the summary as JSON."""
    kb = resolve_kb(ports, workspace, kb_ref)
    found = discover(paths)
    summary = IngestSummary(kb.id, skipped=list(found.skipped))
    reading = _bar(len(found.files), "read", "file", progress)
    sources = read_sources(kb, found.files, summary.skipped, summary.warnings, lambda: reading.advance(1))
    reading.close()
    ingest_documents(deps(ports), kb, sources, replace=replace, summary=summary,
                     progress=_ChunkBar(progress))
    if prune:
        present = {str(p) for p, _ in found.files} | {s["path"] for s in found.skipped}
        bulk_ingest.prune(deps(ports), kb, found.folders, present, summary)
    return summary.as_json()


class _ChunkBar:
    """Progress per embedded chunk; tqdm's ETA comes from the measured rate, so it is honest after a few steps."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: Any = None

    def start(self, total_chunks: int) -> None:
        self.bar = _bar(total_chunks, "embed", "chunk", self.enabled)

    def advance(self, chunks: int) -> None:
        if self.bar is not None and chunks:
            self.bar.advance(chunks)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Bar:
    def __init__(self, bar: Any) -> None:
        self.bar = bar

    def advance(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _bar(total: int, desc: str, unit: str, enabled: bool) -> _Bar:
    """A tqdm bar on stderr, or a silent one (disabled, tqdm missing, or nothing to do)."""
    if not enabled or total == 0:
        return _Bar(None)
    try:
        from tqdm import tqdm
    except ImportError:
        return _Bar(None)
    return _Bar(tqdm(total=total, desc=desc, unit=unit, smoothing=0.1))
