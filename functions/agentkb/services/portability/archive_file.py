"""The archive file (docs/portability.md): JSON Lines, gzip when the name ends in .gz, written and read as a stream.

Line 1 is the header, then one line per record (`{"r": record, "s": section}`), then the manifest: per section
the record count and two sha256 digests (every record, and every record without its vectors and profile).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentkb.errors import BadRequest
from agentkb.services.portability.records import VECTOR_FIELDS, Record

FORMAT = "agentkb-archive"
VERSION = 1
SECTIONS = ("knowledge_bases", "documents", "chunks", "memories", "graph_entities", "graph_relations",
            "graph_proofs", "snapshots", "traces", "keys")


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # one, not one per call


def canonical(value: Any) -> str:
    return _CANONICAL.encode(value)


def canonical_pair(record: Record) -> tuple[str, str]:
    """canonical(record) and canonical(record without VECTOR_FIELDS) in one serialisation of the rest: a sorted
    object's text is its sorted members joined, so the record splits at its vector fields into runs of members."""
    runs: list[dict[str, Any]] = [{}]
    vectors: list[str] = []
    for name in sorted(record):
        if name in VECTOR_FIELDS:
            vectors.append(f'"{name}":{canonical(record[name])}')
            runs.append({})
        else:
            runs[-1][name] = record[name]
    members = [canonical(run)[1:-1] for run in runs]
    full = [m for pair in zip(members, [*vectors, ""], strict=True) for m in pair if m]
    return "{" + ",".join(full) + "}", "{" + ",".join(m for m in members if m) + "}"


@dataclass
class SectionDigest:
    """Count and digests of one section, accumulated record by record."""

    count: int = 0
    full: Any = field(default_factory=hashlib.sha256)
    content: Any = field(default_factory=hashlib.sha256)

    def add(self, record: Record, text: str | None = None) -> None:
        self.count += 1
        if not any(k in record for k in VECTOR_FIELDS):
            line = ((text or canonical(record)) + "\n").encode("utf-8")
            self.full.update(line)
            self.content.update(line)
            return
        full, content = (text, None) if text is not None else canonical_pair(record)
        self.full.update((full + "\n").encode("utf-8"))
        if content is None:
            content = canonical({k: v for k, v in record.items() if k not in VECTOR_FIELDS})
        self.content.update((content + "\n").encode("utf-8"))

    def summary(self) -> dict[str, Any]:
        return {"count": self.count, "sha256": self.full.hexdigest(), "content_sha256": self.content.hexdigest()}


class Digests:
    """Every section's SectionDigest."""

    def __init__(self) -> None:
        self.sections = {name: SectionDigest() for name in SECTIONS}

    def add(self, section: str, record: Record, text: str | None = None) -> None:
        self.sections[section].add(record, text)

    def manifest(self) -> dict[str, dict[str, Any]]:
        return {name: digest.summary() for name, digest in self.sections.items()}


class ArchiveWriter:
    """Writes the header, the records (digesting them as they go) and, on close, the manifest."""

    def __init__(self, out: IO[str], header: dict[str, Any]) -> None:
        self.out = out
        self.digests = Digests()
        self.out.write(canonical({"format": FORMAT, "version": VERSION, **header}) + "\n")

    def write(self, section: str, record: Record) -> None:
        text = canonical(record)
        self.digests.add(section, record, text)
        self.out.write(f'{{"r":{text},"s":"{section}"}}\n')

    def finish(self) -> dict[str, dict[str, Any]]:
        manifest = self.digests.manifest()
        self.out.write(canonical({"manifest": {"version": VERSION, "sections": manifest}}) + "\n")
        self.out.flush()
        return manifest


def open_output(target: str) -> IO[str]:
    """`-` is stdout; a name ending in .gz is gzip-compressed."""
    if target == "-":
        return sys.stdout
    if target.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(target, "wb", compresslevel=6), encoding="utf-8")
    return open(target, "w", encoding="utf-8")  # noqa: SIM115 - the caller closes it


@dataclass
class ArchiveReader:
    """One pass over an archive file: the header first, then `records()` until the manifest."""

    path: Path
    header: dict[str, Any] = field(default_factory=dict)
    manifest: dict[str, Any] | None = None

    def _lines(self) -> Iterator[str]:
        with open(self.path, "rb") as probe:
            gz = probe.read(2) == b"\x1f\x8b"
        with (gzip.open(self.path, "rt", encoding="utf-8") if gz else open(self.path, encoding="utf-8")) as lines:
            yield from lines

    def records(self) -> Iterator[tuple[str, Record]]:
        for section, record, _ in self.entries():
            yield section, record

    def entries(self) -> Iterator[tuple[str, Record, str | None]]:
        """(section, record, the record's text as the line holds it when the line has the writer's form, else
        None): a verifier digests that text instead of serialising the record again."""
        lines = self._lines()
        try:
            header = json.loads(next(lines))
        except (StopIteration, ValueError) as exc:
            raise BadRequest(f"{self.path} is not an agentkb archive") from exc
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise BadRequest(f"{self.path} is not an agentkb archive")
        if header.get("version") != VERSION:
            raise BadRequest(f"Archive format version {header.get('version')} is not supported (this agentkb reads "
                             f"version {VERSION})")
        self.header = header
        for number, line in enumerate(lines, start=2):
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise BadRequest(f"{self.path}: line {number} is not JSON (a truncated archive?)") from exc
            if "manifest" in item:
                self.manifest = item["manifest"]["sections"]
                return
            section = item.get("s")
            if section not in SECTIONS or not isinstance(item.get("r"), dict):
                raise BadRequest(f"{self.path}: line {number} is not an archive record")
            suffix = f',"s":"{section}"}}\n'
            text = line[5:-len(suffix)] if line.startswith('{"r":') and line.endswith(suffix) else None
            yield section, item["r"], text
        raise BadRequest(f"{self.path} has no manifest (a truncated archive?)")


def verify_file(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, manifest) of an archive whose every section matches its manifest; BadRequest on any mismatch.

    The first pass digests each record's text as the file holds it (what the writer hashed, when the file is as
    written: no second serialisation). Only when that disagrees with the manifest is every record serialised
    canonically and digested again (a file re-serialised by another tool), and what disagrees then is refused."""
    reader, found = ArchiveReader(path), {}
    for as_written in (True, False):
        digests = Digests()
        for section, record, text in reader.entries():
            digests.add(section, record, text if as_written else None)
        found = digests.manifest()
        assert reader.manifest is not None  # entries() returns only after reading it
        if all(reader.manifest.get(name) == found[name] for name in SECTIONS):
            break
    assert reader.manifest is not None
    wrong = [name for name in SECTIONS if reader.manifest.get(name) != found[name]]
    if wrong:
        raise BadRequest("The archive does not match its manifest; nothing was imported",
                         details=[{"path": name, "message": f"manifest {reader.manifest.get(name)}, "
                                                            f"records {found[name]}"} for name in wrong])
    return reader.header, reader.manifest
