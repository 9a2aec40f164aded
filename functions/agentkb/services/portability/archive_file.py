"""The archive file (docs/portability.md): JSON Lines, gzip when the name ends in .gz, written and read as a stream.

Line 1 is the header, then one line per record (`{"r": record, "s": section}`), then the manifest: per section
the record count and two sha256 digests (every record, and every record without its vectors and profile).
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agentkb.errors import BadRequest
from agentkb.models.domain import Chunk
from agentkb.services.portability.digests import SECTIONS, Digests
from agentkb.services.portability.records import Record, canonical, without_embedding

try:  # the local extra's parser: an archive line in ~1.2 us instead of ~3 (what it cannot read, json reads)
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - an install without the local extra
    _fast_loads = json.loads  # type: ignore[assignment]

FORMAT = "agentkb-archive"
VERSION = 1
READ_BUFFER = 1 << 20  # a chunk's line is ~3 KB: at the default 8 KB a read() every two lines (1.2 s of 3 GB, 0.25)


def parse(line: str | bytes) -> Any:
    """json.loads of an archive line; a chunk's line (most of an archive) by orjson, when what it read is what json
    reads: orjson refuses NaN and lone surrogates and reads an integer past 64 bits as a float, so a chunk whose
    integers did not come back as integers is read again by json. Other lines (tags, memories' extra: any JSON)
    are json's."""
    if line.endswith(CHUNK_LINE_END) if isinstance(line, str) else line.endswith(_CHUNK_LINE_END):
        try:
            item = _fast_loads(line)
            r = item["r"]
            if type(r["chunk_index"]) is int and type(r["token_count"]) is int and all(
                    type(p) is int for p in r["pages"]):
                return item
        except (ValueError, KeyError, TypeError):
            pass
    return json.loads(line)


CHUNK_LINE_END = ',"s":"chunks"}\n'  # how the writer ends a chunk's line
_CHUNK_LINE_END = CHUNK_LINE_END.encode("ascii")


class ArchiveWriter:
    """Writes the header, the records (digesting them as they go) and, on close, the manifest."""

    def __init__(self, out: IO[str], header: dict[str, Any]) -> None:
        self.out = out
        self.digests = Digests()
        self.out.write(canonical({"format": FORMAT, "version": VERSION, **header}) + "\n")

    def write(self, section: str, record: Record | Chunk) -> None:
        """One record (a chunk also as the Chunk itself: its texts are made from it, records.chunk_texts_of)."""
        text = self.digests.add(section, record)
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

    def _gzip(self) -> bool:
        with open(self.path, "rb") as probe:
            return probe.read(2) == b"\x1f\x8b"

    def binary_lines(self) -> Iterator[bytes]:
        with gzip.open(self.path, "rb") if self._gzip() else open(self.path, "rb", buffering=READ_BUFFER) as lines:
            yield from lines

    def check_header(self, line: str | bytes) -> None:
        """Keep the header line's object as `header`; BadRequest when it is not an archive's of this version."""
        try:
            header = json.loads(line)
        except ValueError as exc:
            raise BadRequest(f"{self.path} is not an agentkb archive") from exc
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise BadRequest(f"{self.path} is not an agentkb archive")
        if header.get("version") != VERSION:
            raise BadRequest(f"Archive format version {header.get('version')} is not supported (this agentkb reads "
                             f"version {VERSION})")
        self.header = header

    def records(self) -> Iterator[tuple[str, Record]]:
        """(section, record) of every line, parsed from its bytes (no decoding pass: orjson and json read UTF-8);
        BadRequest at the first line that is not an archive's, invalid UTF-8 too."""
        lines = self.binary_lines()
        self.check_header(next(lines, b""))
        for number, line in enumerate(lines, start=2):
            try:
                item = parse(line)
            except ValueError as exc:
                raise BadRequest(f"{self.path}: line {number} is not JSON (a truncated archive?)") from exc
            if "manifest" in item:
                self.manifest = item["manifest"]["sections"]
                return
            section = item.get("s")
            if section not in SECTIONS or not isinstance(item.get("r"), dict):
                raise BadRequest(f"{self.path}: line {number} is not an archive record")
            yield section, item["r"]
        raise BadRequest(f"{self.path} has no manifest (a truncated archive?)")


def as_written_digests(reader: ArchiveReader) -> dict[str, Any] | None:
    """Every section's digests from the records' text as the file holds it (what the writer hashed), read as bytes:
    a chunk line (most of an archive) is hashed without being parsed or decoded; the other records are parsed for
    their content digests. None when a line is not in the writer's form (then the careful pass decides)."""
    lines, end = reader.binary_lines(), _CHUNK_LINE_END
    reader.check_header(next(lines, b""))
    digests = Digests()
    chunks = digests.sections["chunks"]
    for line in lines:
        if line.endswith(end) and line.startswith(b'{"r":'):  # most lines: one test, one cut, one hash
            text = line[5:-len(end)]
            if (content := without_embedding(text)) is not None:
                chunks.add_texts(text, content)
                continue
        if line.startswith(b'{"manifest":'):
            try:
                reader.manifest = json.loads(line)["manifest"]["sections"]
            except (ValueError, KeyError, TypeError):
                return None
            return digests.manifest()
        cut = line.rfind(b',"s":"')
        if not (line.startswith(b'{"r":') and line.endswith(b'"}\n')) or cut < 0:
            return None
        section, text = line[cut + 6:-3].decode("ascii", "replace"), line[5:cut]
        if section not in SECTIONS:
            return None
        try:
            record = parse(decoded := text.decode("utf-8"))
        except ValueError:  # UnicodeDecodeError too
            return None
        if not isinstance(record, dict):
            return None
        digests.add(section, record, decoded)
    return None


def verify_file(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(header, manifest) of an archive whose every section matches its manifest; BadRequest on any mismatch.

    The first pass digests each record's text as the file holds it (`as_written_digests`: no parsing of chunk lines, no
    second serialisation). Only when that disagrees with the manifest is every record parsed, serialised
    canonically and digested again (a file re-serialised by another tool), and what disagrees then is refused."""
    reader = ArchiveReader(path)
    found = as_written_digests(reader)
    if found is None or reader.manifest is None or any(reader.manifest.get(n) != found[n] for n in SECTIONS):
        digests = Digests()
        for section, record in reader.records():
            digests.add(section, record)
        found = digests.manifest()
    assert reader.manifest is not None  # records() returns only after reading it
    wrong = [name for name in SECTIONS if reader.manifest.get(name) != found[name]]
    if wrong:
        raise BadRequest("The archive does not match its manifest; nothing was imported",
                         details=[{"path": name, "message": f"manifest {reader.manifest.get(name)}, "
                                                            f"records {found[name]}"} for name in wrong])
    return reader.header, reader.manifest
