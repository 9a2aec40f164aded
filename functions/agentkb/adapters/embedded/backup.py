"""Backup and restore of the embedded data dir (`agentkb backup`, `agentkb restore`; docs/portability.md).

A backup is a gzip tar of: `backup.json` (format, version, time, every file's size and sha256), `agentkb.sqlite3`
(SQLite's online backup of the live database: one read transaction, so it holds exactly the transactions committed
before it began, whatever `agentkb serve` writes meanwhile), the key pepper (`secrets/pepper`: keys keep working
after a restore) and uploaded objects (`objects/`). The BM25 indexes are not copied: they are derived from SQLite
and rebuilt from it on restore. The tar is written to `<FILE>.partial` and renamed when complete, so a killed
backup never leaves a file that looks whole; the source is only read.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sqlite3
import tarfile
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

from agentkb.errors import BadRequest, Conflict

FORMAT, VERSION = "agentkb-backup", 1
DATABASE = "agentkb.sqlite3"
KEPT = ("secrets", "objects")  # folders of the data dir that are data (the lexical indexes are derived)


def backup(data_dir: Path, out: Path) -> dict[str, Any]:
    """Write a consistent backup of the data dir to `out`; returns its manifest."""
    source = data_dir / DATABASE
    if not source.exists():
        raise BadRequest(f"No agentkb database in {data_dir}")
    partial = out.with_name(out.name + ".partial")
    with tempfile.TemporaryDirectory(prefix="agentkb-backup-", dir=out.parent) as tmp:
        copy = Path(tmp) / DATABASE
        started = time.time()
        _online_copy(source, copy)
        files = {DATABASE: copy, **dict(_kept_files(data_dir))}
        manifest = {"format": FORMAT, "version": VERSION, "started_at": started, "tables": _counts(copy),
                    "files": {rel: {"size": p.stat().st_size, "sha256": _sha256(p)} for rel, p in files.items()}}
        with tarfile.open(partial, "w:gz") as tar:
            _add_bytes(tar, "backup.json", json.dumps(manifest, indent=2, sort_keys=True).encode())
            for rel, path in sorted(files.items()):
                tar.add(path, arcname=rel, recursive=False)
        os.replace(partial, out)
    return manifest


def _online_copy(source: Path, target: Path) -> None:
    """SQLite's online backup in one step (pages=-1): a snapshot of every committed transaction at its start."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30.0)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst, pages=-1)
        dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
    finally:
        dst.close()
        src.close()


def _kept_files(data_dir: Path) -> list[tuple[str, Path]]:
    found = []
    for folder in KEPT:
        for path in sorted((data_dir / folder).rglob("*")):
            if path.is_file() and not path.is_symlink():
                found.append((path.relative_to(data_dir).as_posix(), path))
    return found


def _counts(database: Path) -> dict[str, int]:
    conn = sqlite3.connect(database)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN"
                                            " ('knowledge_bases', 'documents', 'chunks', 'memories', 'snapshots',"
                                            " 'recall_traces', 'api_keys', 'graph_entities')")]
        return {name: int(conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0]) for name in sorted(names)}
    finally:
        conn.close()


def restore(archive: Path, data_dir: Path, force: bool = False) -> dict[str, Any]:
    """Restore a backup into `data_dir` (refused when it holds anything, unless `force`); returns its manifest."""
    if data_dir.exists() and any(data_dir.iterdir()) and not force:
        raise Conflict(f"{data_dir} is not empty: restore refuses to overwrite it (use --force)")
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agentkb-restore-", dir=data_dir.parent) as tmp:
        staged = Path(tmp) / "data"
        manifest = _extract(archive, staged)
        if data_dir.exists():
            shutil.rmtree(data_dir)
        os.replace(staged, data_dir)
    return manifest


def _extract(archive: Path, staged: Path) -> dict[str, Any]:
    """Every file of the backup, checked against its manifest, under `staged`."""
    try:
        tar = tarfile.open(archive, "r:gz")  # noqa: SIM115 - closed by the `with` below
    except (OSError, tarfile.TarError) as exc:
        raise BadRequest(f"{archive} is not an agentkb backup") from exc
    with tar:
        manifest = _manifest(tar, archive)
        for rel, expected in manifest["files"].items():
            target = staged / _safe(rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            member = tar.extractfile(rel)
            if member is None:
                raise BadRequest(f"{archive} lacks {rel} (a truncated backup?)")
            with member, open(target, "wb") as out:
                shutil.copyfileobj(member, out)
            if _sha256(target) != expected["sha256"]:
                raise BadRequest(f"{rel} in {archive} does not match its manifest: nothing was restored")
    pepper = staged / "secrets" / "pepper"
    if pepper.exists():
        pepper.chmod(0o600)
    return manifest


def _manifest(tar: tarfile.TarFile, archive: Path) -> dict[str, Any]:
    try:
        member = tar.extractfile("backup.json")
        manifest = json.loads(member.read()) if member else None
    except (KeyError, ValueError, tarfile.TarError, EOFError) as exc:
        raise BadRequest(f"{archive} is not an agentkb backup") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BadRequest(f"{archive} is not an agentkb backup")
    if manifest.get("version") != VERSION:
        raise BadRequest(f"Backup format version {manifest.get('version')} is not supported")
    return manifest


def _safe(rel: str) -> PurePosixPath:
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or not path.parts or path.parts[0] not in (DATABASE, *KEPT):
        raise BadRequest(f"The backup names a file outside the data dir: {rel!r}")
    return path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime = len(data), int(time.time())
    tar.addfile(info, io.BytesIO(data))


def rebuild_indexes(data_dir: Path) -> None:
    """Build the BM25 indexes of a restored data dir from its SQLite (what the first search would otherwise do)."""
    from agentkb.adapters.embedded.lexical.tantivy import LexicalIndexes
    from agentkb.adapters.embedded.sqlite.db import open_database

    LexicalIndexes(open_database(data_dir / DATABASE)).refresh_all()
