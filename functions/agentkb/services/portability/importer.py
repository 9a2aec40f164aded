"""`agentkb import`: verify an archive against its manifest, write it through the target's ports, verify again.

1. One pass over the file checks every section's count and digests against the manifest: a damaged or truncated
   archive fails before anything is written.
2. A second pass writes each record by id (sinks.py): present records are skipped, so a re-run after a crash
   finishes the job and a second import of the same archive writes nothing.
3. The target workspace is read back as an export would read it and its digests compared with the manifest (the
   content digests, without vectors, for re-embedded sections). When the target held nothing before, a mismatch
   fails the import loudly.
An import into another workspace than the archive's rewrites the records on their way to the sinks (rename.py: new
ids where the target holds the originals); step 3 then compares with the digests of the rewritten records.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkb.errors import DomainError
from agentkb.services.portability.archive_file import ArchiveReader, verify_file
from agentkb.services.portability.digests import SECTIONS, Digests
from agentkb.services.portability.export import ExportRequest, workspace_items
from agentkb.services.portability.rename import Renamer
from agentkb.services.portability.sinks import DocumentSink, RecordSink, Tally

if TYPE_CHECKING:
    from agentkb.composition import Ports

NOT_IMPORTED = ("keys",)  # key metadata travels for the record; a key cannot be recreated without its secret
DOCUMENT_SECTIONS = ("knowledge_bases", "documents", "chunks")


class ImportMismatch(DomainError):
    """The target, read back after the import, does not hold what the archive's manifest says."""

    code, http_status, default_message = "IMPORT_MISMATCH", 500, "The imported workspace does not match the archive"


@dataclass
class ImportReport:
    workspace_id: str
    source_workspace_id: str
    tally: Tally
    manifest: dict[str, Any]
    readback: dict[str, Any] = field(default_factory=dict)
    verified: list[str] = field(default_factory=list)
    target_was_empty: bool = True
    ids_remapped: bool = False  # the records got new ids: the target holds the originals (rename.py)
    seconds: dict[str, float] = field(default_factory=dict)  # per phase: verify (the file), write, readback

    @property
    def changed(self) -> bool:
        return any(self.tally.written.values())

    def as_dict(self) -> dict[str, Any]:
        sections = {name: {"archive": self.manifest[name]["count"], "written": self.tally.written.get(name, 0),
                           "present": self.tally.present.get(name, 0),
                           "sha256": self.readback.get(name, {}).get("sha256"),
                           "verified": name in self.verified} for name in SECTIONS}
        return {"workspaceId": self.workspace_id, "sourceWorkspaceId": self.source_workspace_id,
                "changed": self.changed, "reembeddedChunks": self.tally.reembedded,
                "reembeddedMemories": self.tally.reembedded_memories,
                "targetWasEmpty": self.target_was_empty, "idsRemapped": self.ids_remapped, "sections": sections,
                "seconds": {name: round(s, 3) for name, s in self.seconds.items()}}


def import_archive(ports: Ports, path: Path, workspace_id: str | None = None,
                   progress: Callable[[int, int], None] | None = None) -> ImportReport:
    with _collector_paused():
        return _import(ports, path, workspace_id, progress)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while an import runs: its records and chunks are acyclic, freed by reference
    counting, and at bulk rates the collector's passes over the batch held cost ~10% of the write phase
    (bench.portability.bulk); anything cyclic an import leaves is collected once it is back on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _import(ports: Ports, path: Path, workspace_id: str | None,
            progress: Callable[[int, int], None] | None) -> ImportReport:
    started = time.perf_counter()
    header, manifest = verify_file(path)
    source = str(header["workspace"])
    ws = workspace_id or source
    report = ImportReport(ws, source, Tally(), manifest, target_was_empty=_empty(ports, ws))
    renamer = Renamer.start(ports, source, ws, source != ws and (not _empty(ports, source) or _held(ports, ws, path)))
    report.ids_remapped = renamer.remap
    report.seconds["verify"] = time.perf_counter() - started
    total = int(manifest["chunks"]["count"])
    docs = DocumentSink(ports, ws, report.tally, lambda n: progress(n, total) if progress else None)
    others = RecordSink(ports, ws, report.tally, _memory_profile_differs(ports, header))
    for section, record in renamer.records(ArchiveReader(path).records()):
        if section == "knowledge_bases":
            docs.close_document()
            docs.knowledge_base(record)
        elif section == "documents":
            docs.document(record)
        elif section == "chunks":
            docs.chunk(record)
        else:
            docs.finish()
            others.add(section, record)
    docs.finish()
    others.finish()
    report.seconds["write"] = time.perf_counter() - started - report.seconds["verify"]
    _verify(ports, report, renamer.kb_selection(header.get("knowledge_bases") or ()), bool(docs.reembed),
            others.reembed_memories or report.tally.reembedded_memories > 0, renamer)
    report.seconds["readback"] = time.perf_counter() - started - report.seconds["verify"] - report.seconds["write"]
    return report


def _memory_profile_differs(ports: Ports, header: dict[str, Any]) -> bool:
    source = header.get("embedder") or {}
    return (source.get("model"), source.get("dimension")) != (ports.embedder.model_id, ports.embedder.dimension)


def _empty(ports: Ports, ws: str) -> bool:
    return not (ports.catalog.list_knowledge_bases(ws) or ports.archive.memories(ws, 0, 1)
                or next(iter(ports.archive.snapshot_ids(ws)), None) or next(iter(ports.archive.traces(ws)), None))


def _held(ports: Ports, ws: str, path: Path) -> bool:
    """Whether another workspace than `ws` holds the archive's first knowledge base id (a copy imported before
    under another name, ids kept): the index version is read by the id alone on both engines."""
    section, record = next(ArchiveReader(path).records(), ("", {}))  # the reader is dropped, its file closed
    return section == "knowledge_bases" and ports.snapshots.index_version(record["id"]) is not None and \
        ports.catalog.get_knowledge_base(ws, record["id"]) is None


def _verify(ports: Ports, report: ImportReport, kb_names: tuple[str, ...], reembedded: bool,
            memories_reembedded: bool, renamer: Renamer) -> None:
    changed = (DOCUMENT_SECTIONS if reembedded else ()) + (("memories",) if memories_reembedded else ())
    digests = Digests(contents=changed)  # a section's content digest is compared only when its vectors changed
    request = ExportRequest(report.workspace_id, kb_names)
    for section, item in renamer.read_back(workspace_items(ports, request)):
        digests.add(section, item)
    report.readback = digests.manifest()
    expected, found = renamer.compared(report.manifest, report.readback)
    wrong = []
    for name in SECTIONS:
        if name in NOT_IMPORTED:
            continue
        key = "content_sha256" if name in changed else "sha256"
        archive, target = expected[name], found[name]
        if (archive["count"], archive[key]) == (target["count"], target[key]):
            report.verified.append(name)
        else:
            wrong.append(name)
    if wrong and report.target_was_empty:
        raise ImportMismatch("The imported workspace does not match the archive", details=[
            {"path": name, "message": f"archive {expected[name]}, target {found[name]}"}
            for name in wrong])
