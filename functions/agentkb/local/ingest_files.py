"""Files and folders -> named source documents for bulk ingest (the CLI's side: paths, reading, front matter).

A document's name is its path relative to the deepest folder holding every input (a file counts by its folder),
so two inputs of one run never share a name: `x/yaml/README.md x/httplib2/README.md` -> `yaml/README.md`,
`httplib2/README.md`. Everything found is accounted for: unsupported or unreadable files are reported as skipped.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentkb.errors import BadRequest
from agentkb.models.domain import KnowledgeBase
from agentkb.services.extract.files import MAX_FILE_BYTES, Unreadable, extract, supported
from agentkb.services.ingest.bulk import SourceDocument

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


@dataclass
class Discovery:
    files: list[tuple[Path, str]] = field(default_factory=list)  # (absolute path, document name)
    skipped: list[dict[str, str]] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)  # absolute folders given (the --prune scope)


def name_root(paths: Iterable[Path]) -> Path:
    """The deepest folder that holds every input (a file's own folder stands for it)."""
    anchors = [str(p if p.is_dir() else p.parent) for p in paths]
    return Path(os.path.commonpath(anchors))


def discover(paths: list[Path]) -> Discovery:
    """Every file under the inputs, named relative to their common root; hidden folders are reported, not walked."""
    resolved = []
    for path in paths:
        if not path.exists():
            raise BadRequest(f"no such file or folder: {path}")
        resolved.append(path.resolve())
    root = name_root(resolved)
    found = Discovery(folders=[str(p) for p in resolved if p.is_dir()])
    seen: set[Path] = set()
    for path in resolved:
        for file in _walk(path, found.skipped) if path.is_dir() else [path]:
            if file in seen:
                continue
            seen.add(file)
            if supported(file.name):
                found.files.append((file, file.relative_to(root).as_posix()))
            else:
                found.skipped.append({"path": str(file), "reason": extract_reason(file)})
    return found


def extract_reason(file: Path) -> str:
    try:
        extract(file.name, b"")
    except Unreadable as exc:
        return str(exc)
    return "unsupported format"


def _walk(folder: Path, skipped: list[dict[str, str]]) -> list[Path]:
    out: list[Path] = []
    for current, dirs, files in os.walk(folder):
        for hidden in sorted(d for d in dirs if d.startswith(".")):
            skipped.append({"path": str(Path(current) / hidden), "reason": "hidden folder (not walked)"})
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out.extend(Path(current) / f for f in sorted(files))
    return out


def read_sources(kb: KnowledgeBase, files: list[tuple[Path, str]], skipped: list[dict[str, str]],
                 warnings: list[dict[str, str]], advance: Callable[[], None] = lambda: None) -> list[SourceDocument]:
    """Read and extract each file; unreadable ones are skipped with the reason."""
    out: list[SourceDocument] = []
    for path, name in files:
        try:
            if path.stat().st_size > MAX_FILE_BYTES:  # refused before reading it into memory
                raise Unreadable(f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
            extracted = extract(path.name, path.read_bytes())
        except (Unreadable, OSError) as exc:
            skipped.append({"path": str(path), "reason": str(exc) if isinstance(exc, Unreadable) else
                            f"cannot read ({exc.strerror or type(exc).__name__})"})
            advance()
            continue
        tags: dict[str, Any] = {}
        if path.suffix.lower() in (".md", ".markdown", ".txt"):
            text, tags, unknown = split_front_matter(extracted.text, kb)
            extracted = type(extracted)(text, extracted.page_starts)
            warnings.extend({"path": str(path), "message": f"front-matter key {k!r} is not a tag of this knowledge"
                             " base (ignored)"} for k in unknown)
        out.append(SourceDocument(name, str(path), extracted, tags))
        advance()
    return out


def split_front_matter(text: str, kb: KnowledgeBase) -> tuple[str, dict[str, Any], list[str]]:
    """`---\\nkey: value\\n---` at the top sets tags the KB defines; returns (text, tags, keys it does not define)."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return text, {}, []
    tags: dict[str, Any] = {}
    unknown: list[str] = []
    for line in match.group(1).splitlines():
        key, sep, raw = line.partition(":")
        if not sep or not key.strip():
            continue
        definition = kb.tag(key.strip())
        if definition is None:
            unknown.append(key.strip())
            continue
        value: Any = raw.strip().strip("'\"")
        if definition.field_type == "number":
            with contextlib.suppress(ValueError):  # left as text: tag validation fails the file, with the reason
                value = float(value) if "." in value else int(value)
        elif definition.field_type == "boolean":
            value = value.lower() in ("true", "yes", "1")
        tags[definition.tag_name] = value
    return text[match.end():], tags, unknown
