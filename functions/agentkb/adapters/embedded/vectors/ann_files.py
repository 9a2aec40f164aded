"""Approximate indexes persisted beside SQLite, each stamped with the change-log sequence it reflects.

`<db>.vectors/<FORMAT>/<kb id>/ivf-<seq>-<built for>.faiss`: written to a temporary name and renamed, so a file
that exists is whole; the stamp is in its name, so the file and its stamp can never disagree. A process that starts
loads the newest one and catches it up from the log (vectors/changes.py); one that cannot be caught up (pruned log,
another database, unreadable) is rebuilt from SQLite, so a crash anywhere loses nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agentkb.adapters.embedded.vectors.ann import Ann

FORMAT = "v1"  # bump when the index kind or its parameters change: older files are deleted, indexes rebuilt
SAVE_EVERY = 50_000  # rows changed since the last save that make the next catch-up save again


class AnnFiles:
    def __init__(self, root: Path | None) -> None:
        self.root = None if root is None else root / FORMAT
        if root is not None and root.exists():
            for stale in (p for p in root.iterdir() if p.is_dir() and p.name != FORMAT):
                shutil.rmtree(stale, ignore_errors=True)

    def folder(self, kb_id: str) -> Path | None:
        """The KB's folder (its index and its saved table, vectors/table_file.py), or None when it keeps none."""
        if self.root is None or not kb_id.replace("-", "").replace("_", "").isalnum():
            return None
        return self.root / kb_id

    def load(self, kb_id: str) -> tuple[Ann, int] | None:
        """The newest persisted index of the KB and its stamp, or None."""
        folder = self.folder(kb_id)
        if folder is None or not folder.exists():
            return None
        stamped = []
        for path in folder.glob("ivf-*.faiss"):
            parts = path.stem.split("-")
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                stamped.append((int(parts[1]), int(parts[2]), path))
        for seq, built_for, path in sorted(stamped, reverse=True):
            try:
                return Ann.load(path, built_for), seq
            except (RuntimeError, OSError):  # unreadable: the next one, or a rebuild
                continue
        return None

    def save(self, kb_id: str, ann: Ann, seq: int) -> None:
        folder = self.folder(kb_id)
        if folder is None:
            return
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".tmp-{os.getpid()}-{seq}.faiss"
        final = folder / f"ivf-{seq}-{ann.built_for}.faiss"
        ann.save(temporary)
        with open(temporary, "rb+") as written:
            os.fsync(written.fileno())  # whole on disk before its name says so
        os.replace(temporary, final)
        for other in folder.glob("ivf-*.faiss"):
            if other != final:
                other.unlink(missing_ok=True)

    def drop(self, kb_id: str) -> None:
        folder = self.folder(kb_id)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
