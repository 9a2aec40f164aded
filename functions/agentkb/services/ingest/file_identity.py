"""Bulk ingest's file identity: one file, one document, however a run reaches the file.

A file is its source path (the resolved absolute path the CLI read it from). A file the KB already holds is
that document, under the name it already has, whether this run came through the same folder, a folder above
(`docs/` after `docs/a/`) or the file itself: it is updated or skipped, never stored a second time. A new file
takes the name the run gives it; a name another file's document holds (or one written through the API) is a
conflict unless `replace`, and `replace` never hands a document one file of the run is to another file of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentkb.models.domain import Document
from agentkb.ports.catalog import Catalog


@dataclass(frozen=True)
class FileIdentities:
    """What the catalog holds for the files of one run, read once."""

    by_path: dict[str, Document]  # the document each file of the run already is
    claimed: frozenset[str]  # every document read from a file of the run
    warnings: list[dict[str, str]]  # files an earlier version stored twice


@dataclass(frozen=True)
class Target:
    """The document a file writes (None: a new one) and the name it is written under."""

    previous: Document | None
    name: str


def find_identities(catalog: Catalog, kb_id: str, names: dict[str, str]) -> FileIdentities:
    """The documents of these files (source path -> the run's name), in one catalog read whatever the KB's size."""
    stored: dict[str, list[Document]] = {}
    for doc in catalog.find_documents_by_source_path(kb_id, names):
        stored.setdefault(doc.source_path or "", []).append(doc)
    by_path: dict[str, Document] = {}
    warnings: list[dict[str, str]] = []
    for path, docs in stored.items():
        # stored twice by an earlier version (folder, then file): the copy of this run's name, else the oldest
        by_path[path] = kept = next((d for d in docs if d.name == names[path]), docs[0])
        if len(docs) > 1:
            copies = ", ".join(repr(d.name) for d in docs if d is not kept)
            warnings.append({"path": path, "message": f"also stored as {copies}; {kept.name!r} is kept up to date"
                             " (agentkb docs delete removes a copy)"})
    return FileIdentities(by_path, frozenset(d.id for docs in stored.values() for d in docs), warnings)


def resolve_target(catalog: Catalog, kb_id: str, path: str, name: str, replace: bool,
                   known: FileIdentities) -> Target | dict[str, str]:
    """Where one file goes, or the conflict that keeps it out (as the ingest summary reports it)."""
    own = known.by_path.get(path)
    if own is not None:
        return Target(own, own.name)
    previous = catalog.find_document_by_name(kb_id, name)
    if previous is None or (replace and previous.id not in known.claimed):
        return Target(previous, name)
    conflict = {"path": path, "name": name, "documentId": previous.id,
                "existingSourcePath": previous.source_path or "(written through the API)"}
    if previous.id in known.claimed:
        conflict["reason"] = "another file of this run is that document (--replace cannot take it)"
    return conflict
