"""Operator actions behind the CLI: create knowledge bases, ingest files and folders."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from agentkb.composition import Ports
from agentkb.errors import BadRequest, DomainError, NotFound
from agentkb.models.domain import KnowledgeBase, Principal
from agentkb.models.ingest import AddDocumentRequest, CreateKnowledgeBaseRequest, TagDefinitionInput
from agentkb.services import ingest
from agentkb.services.ingest import IngestDeps

SUFFIXES = (".md", ".markdown", ".txt")
OPERATOR = Principal(id="operator", workspaces=("*",), scopes=("api:read", "api:write"))
GROUP = 32  # files whose chunks are embedded together
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


def deps(ports: Ports) -> IngestDeps:
    return IngestDeps(ports.catalog, ports.index, ports.embedder, ports.tokenizer,
                      ports.embedding_cache)


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


def discover(paths: Iterable[Path]) -> list[tuple[Path, str]]:
    """(file, document name) to ingest: given files by name, .md/.txt under folders by relative path."""
    found: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            found.extend((p, p.relative_to(path).as_posix()) for p in sorted(path.rglob("*"))
                         if p.is_file() and p.suffix.lower() in SUFFIXES)
        elif path.is_file():
            found.append((path, path.name))
        else:
            raise BadRequest(f"no such file or folder: {path}")
    return found


def split_front_matter(text: str, kb: KnowledgeBase) -> tuple[str, dict[str, Any]]:
    """`---\\nkey: value\\n---` at the top sets tags that the knowledge base defines (others are ignored)."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return text, {}
    tags: dict[str, Any] = {}
    for line in match.group(1).splitlines():
        key, sep, raw = line.partition(":")
        definition = kb.tag(key.strip()) if sep else None
        if definition is None:
            continue
        value: Any = raw.strip().strip("'\"")
        if definition.field_type == "number":
            value = float(value) if "." in value else int(value)
        elif definition.field_type == "boolean":
            value = value.lower() in ("true", "yes", "1")
        tags[definition.tag_name] = value
    return text[match.end():], tags


def ingest_paths(ports: Ports, workspace: str, kb_ref: str, paths: list[Path],
                 progress: bool = True) -> dict[str, Any]:
    """Ingest files one document each (unchanged files are skipped by content hash); returns a summary.

    Files go in groups: a group's chunks are embedded in full batches first, then each file is written in its
    own transaction, so one bad file fails alone.
    """
    kb = resolve_kb(ports, workspace, kb_ref)
    files = discover(paths)
    summary: dict[str, Any] = {"knowledgeBaseId": kb.id, "documents": 0, "chunks": 0, "failed": []}
    ingest_deps = deps(ports)
    bar = _progress(len(files), progress)
    for start in range(0, len(files), GROUP):
        group = []
        for path, name in files[start:start + GROUP]:
            try:
                content, tags = split_front_matter(path.read_text(encoding="utf-8"), kb)
                group.append((path, AddDocumentRequest(workspaceId=workspace, name=name, content=content,
                                                       tags=tags or None)))
            except (ValueError, OSError) as exc:
                summary["failed"].append({"path": str(path), "error": str(exc)})
        ingest.prefetch_embeddings(ingest_deps, kb, [request.content for _, request in group])
        for path, request in group:
            try:
                doc = ingest.add_document(kb.id, request, OPERATOR, ingest_deps)
            except DomainError as exc:
                summary["failed"].append({"path": str(path), "error": exc.message})
                continue
            summary["documents"] += 1
            summary["chunks"] += doc.chunk_count
        bar(len(files[start:start + GROUP]))
    return summary


def _progress(total: int, enabled: bool) -> Callable[[int], None]:
    """A progress bar's update function (tqdm on stderr), or a no-op."""
    if not enabled:
        return lambda _: None
    try:
        from tqdm import tqdm
    except ImportError:
        return lambda _: None
    bar = tqdm(total=total, desc="ingest", unit="doc")

    def advance(n: int) -> None:
        bar.update(n)
        if bar.n >= total:
            bar.close()

    return advance
