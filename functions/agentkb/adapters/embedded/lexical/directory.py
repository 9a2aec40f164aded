"""Where the embedded BM25 indexes live: one pair (chunks, documents) per knowledge base, in a format directory.

`<db>.lexical/<FORMAT>/<kb id>/chunks` and `.../documents`. A KB's query then searches only its own segments
(block-max WAND over a small index, no scope filter over every KB's postings), and deleting a KB deletes its
directory. A directory of another format (an older layout, e.g. v3's one index shared by every KB) is deleted
when the database is opened; the KBs' indexes are rebuilt from SQLite at their first use.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

FORMAT = "v4"  # bump when the layout, the schema or the analyzer changes: every index is rebuilt from SQLite


def root_of(db_path: Path) -> Path:
    """The format directory of a database's lexical indexes (directories of other formats removed)."""
    base = db_path.parent / f"{db_path.name}.lexical"
    if base.exists():
        for stale in (p for p in base.iterdir() if p.is_dir() and p.name != FORMAT):
            shutil.rmtree(stale, ignore_errors=True)
    return base / FORMAT


def kb_dir(root: Path, kb_id: str) -> Path:
    """A KB's directory: its id when that is a safe file name, else a digest of it."""
    safe = kb_id.replace("-", "").replace("_", "").isalnum() and len(kb_id) <= 128
    return root / (kb_id if safe else "h" + hashlib.sha256(kb_id.encode()).hexdigest()[:32])


def forget(root: Path, kb_id: str) -> None:
    """Delete a KB's indexes (the KB is gone from SQLite)."""
    shutil.rmtree(kb_dir(root, kb_id), ignore_errors=True)
