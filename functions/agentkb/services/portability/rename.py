"""Renamed imports (issue 25, docs/portability.md "Renamed on request"): an archive imported into another workspace.

An import renames when its target workspace W2 is not the archive's W, and remaps, besides, when the target holds
W's data (the copy beside the original: W holds the ids). The first run stores that decision in the target
(`WorkspaceArchive.remap_decision`); re-runs read it back. Remapping, a string id becomes uuid5(NAMESPACE,
"<W2>\n<old id>") (a chunk id `<document>:<revision>:<index>` keeps its form): derived, so every run agrees; a
memory id comes from the target's allocator through the map it stores (`WorkspaceArchive.memory_id_map`), asked a
page at a time before the page reaches the sink. Every reference follows. A renamed import stores a snapshot under
snapshot_id_for(W2, run, attempt), its body naming W2. Records are rewritten on their way to the sinks and digested
as rewritten (`expected`), for the read-back to compare with, order-free (new ids sort differently).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from agentkb.models.digits import ascii_int
from agentkb.services.portability.digests import SECTIONS, Digests, SectionDigest
from agentkb.services.portability.records import Record
from agentkb.services.snapshot.service import snapshot_bytes, snapshot_hash, snapshot_id_for
from agentkb.services.snapshot.sources import document_uri, parse_document_uri

if TYPE_CHECKING:
    from agentkb.composition import Ports

NAMESPACE = uuid.UUID("ca9d92c9-0de6-494b-9c63-bfdf2cd409ef")  # fixed: the same old id, the same new one
PAGE = 200  # memories or traces per map request (the sinks write pages of the same size)
_HEX = re.compile(r"[0-9a-f]{32}")
_REVISION_INDEX = re.compile(r"\d+:\d+")  # what follows `<document id>:` in a knowledge chunk id
_MEMORY_CHUNK = re.compile(r"memory:(\d+)")
Stream = Iterable[tuple[str, Any]]  # (section, record); a read-back has a Chunk for a chunk's (workspace_items)


@dataclass
class _OrderFree(SectionDigest):
    """A section's count and the sums (mod 2**256) of each record line's sha256, with and without its vectors."""

    sums: list[int] = field(default_factory=lambda: [0, 0])

    def add_texts(self, full: bytes, content: bytes) -> None:
        self.count += 1
        for i, text in enumerate((full, content)):
            self.sums[i] = (self.sums[i] + int.from_bytes(hashlib.sha256(text + b"\n").digest(), "big")) % 2**256

    def summary(self) -> dict[str, Any]:
        return {"count": self.count, "sha256": f"{self.sums[0]:064x}", "content_sha256": f"{self.sums[1]:064x}"}


class OrderFreeDigests(Digests):
    """archive_file.Digests (each record's texts made as there) summed order-free: new ids sort differently."""

    def __init__(self) -> None:
        self.sections = {name: _OrderFree() for name in SECTIONS}

    def observe(self, items: Stream) -> Iterator[tuple[str, Any]]:
        for section, item in items:
            self.add(section, item)
            yield section, item


@dataclass
class Renamer:
    """The rewriting of one import's records into workspace `target` (see the module's docstring)."""

    ports: Ports
    source: str
    target: str
    remap: bool = False
    renamed: bool = False  # False: the target is to hold the records exactly as the archive does
    expected: OrderFreeDigests = field(default_factory=OrderFreeDigests)  # of the records as rewritten
    found: OrderFreeDigests | None = None  # the read-back's, when renamed
    kb_ids: set[str] = field(default_factory=set)  # the archive's knowledge base ids

    @classmethod
    def start(cls, ports: Ports, source: str, target: str, source_held: bool) -> Renamer:
        """`source_held`: the target holds data of the source workspace (only asked when the import renames)."""
        if source == target:
            return cls(ports, source, target)
        return cls(ports, source, target, ports.archive.remap_decision(source, target, source_held), True)

    def records(self, stream: Stream) -> Iterable[tuple[str, Record]]:
        """The archive's records as the target is to hold them, in archive order."""
        return self._rewritten(stream) if self.renamed else stream

    def read_back(self, items: Stream) -> Stream:
        """The target's records as the importer reads them back, digested order-free when the import renames."""
        if not self.renamed:
            return items
        self.found = OrderFreeDigests()
        return self.found.observe(items)

    def compared(self, manifest: dict[str, Any], readback: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """(what the target should hold, what it holds) per section: the manifest and the read-back's digests, or
        for a renamed import the rewritten records' and the read-back's order-free digests."""
        if self.found is None:
            return manifest, readback
        return self.expected.manifest(), self.found.manifest()

    def kb_selection(self, names: Iterable[str]) -> tuple[str, ...]:
        """The export's --kb names as the target knows them (an archive's knowledge base id is remapped)."""
        return tuple(self.id(k) if self.remap and k in self.kb_ids else k for k in names)

    def id(self, old: str) -> str:
        new = uuid.uuid5(NAMESPACE, f"{self.target}\n{old}")
        return new.hex if _HEX.fullmatch(old) else str(new)

    def _rewritten(self, stream: Stream) -> Iterator[tuple[str, Record]]:
        paged, page = "", list[Record]()
        for section, record in stream:
            if page and (section != paged or len(page) >= PAGE):
                yield from self._flush(paged, page)
                page = []
            if section in ("memories", "traces"):
                paged = section
                page.append(record)
            else:
                yield self._digested(section, self._one(section, record))
        yield from self._flush(paged, page)

    def _flush(self, section: str, page: list[Record]) -> Iterator[tuple[str, Record]]:
        if page:
            for record in self._memories(page) if section == "memories" else self._traces(page):
                yield self._digested(section, record)

    def _digested(self, section: str, record: Record) -> tuple[str, Record]:
        self.expected.add(section, record)
        return section, record

    def _one(self, section: str, record: Record) -> Record:
        if section == "snapshots":
            return self._snapshot(record)
        if not self.remap:
            return record
        if section == "knowledge_bases":
            self.kb_ids.add(record["id"])
            return {**record, "id": self.id(record["id"])}
        if section == "documents":
            return {**record, "id": self.id(record["id"]), "knowledge_base_id": self.id(record["knowledge_base_id"])}
        if section == "chunks":
            document, old = record["document_id"], record["id"]
            new = self.id(document) + old[len(document):] if old.startswith(document + ":") else self.id(old)
            return {**record, "id": new, "document_id": self.id(document)}
        return record

    def _map(self, ids: Iterable[int]) -> dict[int, int]:
        return self.ports.archive.memory_id_map(self.source, self.target, set(ids))

    def _memories(self, page: list[Record]) -> list[Record]:
        if not self.remap:
            return page
        cited = [n for m in page for r in _relations(m["extra"]) if (n := ascii_int(str(r["memory_id"]))) is not None]
        older = [m["supersedes"] for m in page if m["supersedes"] is not None]
        ids = self._map([*(m["memory_id"] for m in page), *older, *cited])
        return [{**m, "memory_id": ids[m["memory_id"]], "extra": _extra(m["extra"], ids),
                 "supersedes": None if m["supersedes"] is None else ids[m["supersedes"]]} for m in page]

    def _traces(self, page: list[Record]) -> list[Record]:
        out = [{**t, "request": _named(t["request"], "workspace_id", self.source, self.target)} for t in page]
        if not self.remap:
            return out
        ids = self._map([*(i["memory_id"] for t in page for i in t["items"]),
                         *(u[0] for t in page for u in t["usage"])])
        return [{**t, "request_id": self.id(t["request_id"]),
                 "items": [{**i, "memory_id": ids[i["memory_id"]]} for i in t["items"]],
                 "usage": [[ids[m], *rest] for m, *rest in t["usage"]]} for t in out]

    # -- snapshots ------------------------------------------------------------------------------------------------
    def _snapshot(self, record: Record) -> Record:
        out = {**record, "snapshot_id": snapshot_id_for(self.target, record["run_id"], record["attempt_id"])}
        try:
            doc = json.loads(base64.b64decode(record["body"]))
        except ValueError:
            return out  # not a snapshot document: its bytes travel as they are
        if isinstance(doc, dict) and "snapshotId" in doc:
            self._snapshot_document(doc, out["snapshot_id"])
            out["body"] = base64.b64encode(snapshot_bytes(doc)).decode("ascii")
        return out

    def _snapshot_document(self, doc: dict[str, Any], snapshot_id: str) -> None:
        """In place (a key keeps its place, so the bytes are what the snapshot service would have stored)."""
        entries = [e for name in ("items", "exclusions") for e in doc.get(name) or () if isinstance(e, dict)]
        cited = [n for e in entries for n in (_memory_chunk(e), self._memory_uri(e.get("provenance"))) if n]
        ids = self._map(cited) if self.remap and cited else {}
        doc["snapshotId"] = snapshot_id
        scope = doc.get("scope")
        if isinstance(scope, dict):
            scope["workspaceId"] = self.target
            if self.remap and isinstance(scope.get("knowledgeBaseIds"), list):
                scope["knowledgeBaseIds"] = [self.id(k) for k in scope["knowledgeBaseIds"]]
        for name in ("items", "exclusions"):
            if isinstance(doc.get(name), list):
                doc[name] = [self._cite(e, ids) if isinstance(e, dict) else e for e in doc[name]]
        if "hash" in doc:
            doc["hash"] = snapshot_hash(doc)

    def _cite(self, entry: dict[str, Any], ids: dict[int, int]) -> dict[str, Any]:
        """An item or exclusion with the ids it cites as the target knows them (candidates' shapes: sources.py)."""
        out = dict(entry)
        if isinstance(out.get("provenance"), str):
            out["provenance"] = self._uri(out["provenance"], ids)
        source, chunk = out.get("sourceId"), out.get("chunkId")
        if not self.remap or not isinstance(source, str):
            return out
        if source.startswith("knowledge-base:"):
            out["sourceId"] = "knowledge-base:" + self.id(source.removeprefix("knowledge-base:"))
        elif isinstance(chunk, str) and chunk.startswith(source + ":") and _REVISION_INDEX.fullmatch(
                chunk[len(source) + 1:]):  # a knowledge chunk: sourceId is its document
            out["sourceId"], out["chunkId"] = self.id(source), self.id(source) + chunk[len(source):]
            kb, at, version = str(out.get("indexVersion") or "").rpartition("@")
            if at:
                out["indexVersion"] = f"{self.id(kb)}@{version}"
        elif (memory := _memory_chunk(out)) in ids:
            out["chunkId"] = f"memory:{ids[memory]}"
        return out

    def _uri(self, uri: str, ids: dict[int, int]) -> str:
        prefix = f"agentkb://ws/{quote(self.source, safe='')}/"
        if not uri.startswith(prefix):
            return uri
        if self.remap and (cited := parse_document_uri(uri)) is not None:
            return document_uri(self.target, self.id(cited[1]), self.id(cited[2])) + "".join(uri.partition("#")[1:])
        memory = self._memory_uri(uri)
        rest = f"memories/{ids[memory]}" if memory in ids else uri[len(prefix):]
        return f"agentkb://ws/{quote(self.target, safe='')}/{rest}"

    def _memory_uri(self, uri: Any) -> int | None:
        prefix = f"agentkb://ws/{quote(self.source, safe='')}/memories/"
        return ascii_int(uri.removeprefix(prefix)) if isinstance(uri, str) and uri.startswith(prefix) else None


def _memory_chunk(entry: dict[str, Any]) -> int | None:
    found = _MEMORY_CHUNK.fullmatch(str(entry.get("chunkId"))) if entry.get("class") == "memory" else None
    return int(found[1]) if found else None


def _relations(extra: Any) -> list[dict[str, Any]]:
    """The OB1 relations of a memory's extra that name a memory (review.py: supersede, merge)."""
    relations = extra.get("relations") if isinstance(extra, dict) else None
    return [r for r in relations if isinstance(r, dict) and "memory_id" in r] if isinstance(relations, list) else []


def _extra(extra: Any, ids: dict[int, int]) -> Any:
    if not _relations(extra):
        return extra
    return {**extra, "relations": [{**r, "memory_id": str(ids[n])}
                                   if isinstance(r, dict) and (n := ascii_int(str(r.get("memory_id")))) in ids else r
                                   for r in extra["relations"]]}


def _named(value: Any, key: str, old: str, new: str) -> Any:
    """A mapping with `key` set to `new` where it was `old`; anything else as it is."""
    return {**value, key: new} if isinstance(value, dict) and value.get(key) == old else value
