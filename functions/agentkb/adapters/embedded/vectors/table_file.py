"""A large KB's in-memory table saved beside its approximate index, so a process that starts reads it at disk speed.

`<db>.vectors/<FORMAT>/<kb id>/table-<seq>.bin`: rowids, which rows have a vector, the float16 vectors and the
chunk and document ids of every live row at change-log sequence `seq`, written to a temporary name, fsynced and
renamed (a file that exists is whole). Reading it is one `readinto` per array into the table's own buffers, no
Python work per row but splitting the ids. A file is used only if it is complete (its size and trailer check), its
stamp can be caught up from the log, and after that catch-up it holds exactly the rows SQLite holds (count and sum
of rowids): a torn file or one from another database is ignored and the table is read from SQLite.
"""

from __future__ import annotations

import os
import sqlite3
import struct
from pathlib import Path

import numpy as np

from agentkb.adapters.embedded.vectors.changes import HEADROOM, Rows

MAGIC, TRAILER = b"AKBTBL01", b"AKBTEND1"
_HEADER = struct.Struct("<8sqqqq")  # magic, rows, width, id bytes, document id bytes
BLOCK = 65_536


def save(folder: Path, seq: int, rowids: np.ndarray, has_vector: np.ndarray, vectors: np.ndarray,
         chunk_ids: list[str], document_ids: list[str]) -> None:
    """Write the table (float16 vectors; ids never hold NUL) and remove older files."""
    if vectors.dtype != np.float16 or any("\x00" in i for i in chunk_ids) or any("\x00" in i for i in document_ids):
        return
    folder.mkdir(parents=True, exist_ok=True)
    ids, docs = "\x00".join(chunk_ids).encode(), "\x00".join(document_ids).encode()
    temporary, final = folder / f".tmp-table-{os.getpid()}-{seq}.bin", folder / f"table-{seq}.bin"
    with open(temporary, "wb") as out:
        out.write(_HEADER.pack(MAGIC, len(rowids), vectors.shape[1], len(ids), len(docs)))
        out.write(np.ascontiguousarray(rowids, np.int64).tobytes())
        out.write(np.ascontiguousarray(has_vector, np.bool_).tobytes())
        for start in range(0, len(vectors), BLOCK):
            out.write(np.ascontiguousarray(vectors[start:start + BLOCK]).tobytes())
        out.write(ids)
        out.write(docs)
        out.write(TRAILER)
        out.flush()
        os.fsync(out.fileno())  # whole on disk before its name says so
    os.replace(temporary, final)
    for other in folder.glob("table-*.bin"):
        if other != final:
            other.unlink(missing_ok=True)


def load(folder: Path | None, width: int) -> tuple[Rows, int] | None:
    """The newest whole table file of the folder and its stamp (None: none, or torn, or of another width)."""
    if folder is None or not folder.exists():
        return None
    stamped = sorted(((int(p.stem.split("-")[1]), p) for p in folder.glob("table-*.bin")
                      if p.stem.split("-")[1].isdigit()), reverse=True)
    for seq, path in stamped:
        try:
            rows = _read(path, width)
        except (OSError, ValueError, struct.error, UnicodeDecodeError):
            rows = None
        if rows is not None:
            return rows, seq
    return None


def _read(path: Path, width: int) -> Rows | None:
    with open(path, "rb") as f:
        magic, n, stored_width, id_bytes, doc_bytes = _HEADER.unpack(f.read(_HEADER.size))
        expected = _HEADER.size + n * (8 + 1 + 2 * width) + id_bytes + doc_bytes + len(TRAILER)
        if magic != MAGIC or stored_width != width or os.fstat(f.fileno()).st_size != expected:
            return None
        capacity = int(n * HEADROOM) + 16  # room for appends, as a table read from SQLite has (changes._fill)
        rowids, has_vector = np.zeros(capacity, np.int64), np.zeros(capacity, bool)
        vectors = np.zeros((capacity, width), np.float16)
        for array in (rowids[:n], has_vector[:n], vectors[:n]):
            if f.readinto(array.data) != array.nbytes:
                return None
        ids, docs = f.read(id_bytes).decode(), f.read(doc_bytes).decode()
        if f.read() != TRAILER:
            return None
    chunk_ids, document_ids = ids.split("\x00") if n else [], docs.split("\x00") if n else []
    if len(chunk_ids) != n or len(document_ids) != n or (n > 1 and bool(np.any(np.diff(rowids[:n]) <= 0))):
        return None
    return Rows(rowids[:n], chunk_ids, document_ids, vectors[:n], has_vector[:n])


def matches(conn: sqlite3.Connection, kb_id: str, rowids: np.ndarray) -> bool:
    """Whether these are exactly the KB's rows in SQLite (count and sum of rowids: one covering-index read)."""
    count, total = conn.execute("SELECT count(*), coalesce(sum(rowid), 0) FROM chunks WHERE knowledge_base_id = ?",
                                (kb_id,)).fetchone()
    return int(count) == len(rowids) and int(total) == int(rowids.sum())
