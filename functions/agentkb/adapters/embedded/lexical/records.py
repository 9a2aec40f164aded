"""What the embedded BM25 indexes hold: the tantivy schema and the records made from SQLite's chunk rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any

import tantivy

from agentkb.services.ingest.chunking import reassemble

STAMP = "\x00stamp"  # the `doc` of the record holding the log sequence an index has applied
CHUNK_ROWS = ("SELECT c.rowid, c.document_id, c.content, c.context FROM chunks c WHERE c.knowledge_base_id = ?"
              " {extra} ORDER BY c.document_id, c.chunk_index")


def schema() -> Any:
    """rowid (fast: hits are named by it), doc (deletes and filters by document), the analysed text, the stamp's seq."""
    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("rowid", indexed=True, fast=True)
    builder.add_unsigned_field("seq", stored=True)
    builder.add_text_field("doc", tokenizer_name="raw")
    builder.add_text_field("text", tokenizer_name="agentkb", index_option="freq")
    return builder.build()


def chunk_records(rows: Iterable[sqlite3.Row]) -> Iterator[dict[str, Any]]:
    """A chunk is found by its words and by its context (the title and headings above it)."""
    for r in rows:
        yield {"rowid": r[0], "doc": r[1], "text": f"{r[3]}\n{r[2]}" if r[3] else r[2]}


def document_records(rows: Iterable[sqlite3.Row]) -> Iterator[dict[str, Any]]:
    """One record per document (rows come grouped by document): its chunks put back together without overlaps."""
    current: list[Any] = []
    for row in rows:
        if current and current[0][1] != row[1]:
            yield _document_record(current)
            current = []
        current.append(row)
    if current:
        yield _document_record(current)


def _document_record(rows: list[Any]) -> dict[str, Any]:
    """A document's record: each distinct context once (title, headings), then its text without overlaps."""
    first = rows[0]
    contexts = "\n".join(dict.fromkeys(r[3] for r in rows if r[3]))
    text = reassemble([r[2] for r in rows])
    return {"rowid": first[0], "doc": first[1], "text": f"{contexts}\n{text}"}
