"""An archive's digests (docs/portability.md): per section the record count, the sha256 of every record's canonical
text followed by a newline, in file order, and the same without the vectors (the content digest).

Hashed as the records come, on the caller's thread. Measured and rejected: gathering the texts into 4 MB blocks
hashed on a thread of their own (hashlib lets go of the GIL for them) saved ~0.5 s of a 1M-chunk verify pass and
nothing of the read-back (the joins and the GIL's hand-offs cost what the hashing did; bench.portability.bulk).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from agentkb.models.domain import Chunk
from agentkb.services.portability.records import (
    CHUNK_KEYS,
    VECTOR_FIELDS,
    Record,
    canonical,
    canonical_pair,
    chunk_record,
    chunk_texts,
    chunk_texts_of,
)

DOCUMENT_KEYS = frozenset(("chunk_count", "content", "content_hash", "created_at", "error", "id", "knowledge_base_id",
                           "name", "revision", "secret_chunks", "source_path", "source_url", "status", "tags",
                           "token_count"))  # records.document_record's
SECTIONS = ("knowledge_bases", "documents", "chunks", "memories", "graph_entities", "graph_relations",
            "graph_proofs", "snapshots", "traces", "keys")


@dataclass
class SectionDigest:
    """Count and digests of one section, accumulated record by record."""

    count: int = 0
    full: Any = field(default_factory=hashlib.sha256)
    content: Any = field(default_factory=hashlib.sha256)  # None: not wanted (summary says None)

    def add(self, record: Record, text: str | None = None) -> None:
        if text is not None and record.keys() == CHUNK_KEYS and (texts := chunk_texts(record, text)) is not None:
            self.add_texts(*texts)  # one serialisation: the content text is the full one without its vector
            return
        if not any(k in record for k in VECTOR_FIELDS):
            line = (text or canonical(record)).encode("utf-8")
            self.add_texts(line, line)
            return
        full, content = (text, None) if text is not None else canonical_pair(record)
        if content is None:
            content = canonical({k: v for k, v in record.items() if k not in VECTOR_FIELDS})
        self.add_texts(full.encode("utf-8"), content.encode("utf-8"))

    def add_texts(self, full: bytes, content: bytes) -> None:
        """One record as its canonical UTF-8 text, with and without its vector fields."""
        self.count += 1
        self.full.update(full)
        self.full.update(b"\n")
        if self.content is not None:
            self.content.update(content)
            self.content.update(b"\n")

    def summary(self) -> dict[str, Any]:
        return {"count": self.count, "sha256": self.full.hexdigest(),
                "content_sha256": None if self.content is None else self.content.hexdigest()}


class Digests:
    """Every section's SectionDigest."""

    def __init__(self, contents: Collection[str] = SECTIONS) -> None:
        """`contents`: the sections whose content digest is wanted too (the full digest is always made)."""
        self.sections = {name: SectionDigest(content=hashlib.sha256() if name in contents else None)
                         for name in SECTIONS}

    def add(self, section: str, item: Record | Chunk, text: str | None = None) -> str:
        """Digest one record (a chunk also as the Chunk read: its texts are made from it); returns its text."""
        if isinstance(item, Chunk):
            texts = chunk_texts_of(item)
            record = chunk_record(item) if texts is None else {}
        else:
            record = item
            texts = chunk_texts(item) if text is None and item.keys() == CHUNK_KEYS else None
        if texts is not None:
            self.sections[section].add_texts(*texts)
            return texts[0].decode("utf-8")
        text = text or document_text(record) or canonical(record)
        self.sections[section].add(record, text)
        return text

    def manifest(self) -> dict[str, dict[str, Any]]:
        return {name: digest.summary() for name, digest in self.sections.items()}


def document_text(r: Record) -> str | None:
    """canonical(r) of a document record made member by member in sorted key order, with json's own string
    escaping: 3x faster than the encoder (a 1M-chunk import's read-back serialises 250k documents). None when a
    value is not of a document's type, and the encoder serialises it."""
    if r.keys() != DOCUMENT_KEYS:
        return None
    counts, secret = (r["chunk_count"], r["revision"], r["token_count"]), r["secret_chunks"]
    if not (all(type(v) is int for v in counts) and (
            secret is None or type(secret) is list and all(type(i) is int for i in secret))):
        return None
    try:
        return (f'{{"chunk_count":{counts[0]},"content":{_string(r["content"])},"content_hash":'
                f'{_string(r["content_hash"])},"created_at":{_string(r["created_at"])},"error":{_string(r["error"])},'
                f'"id":{_string(r["id"])},"knowledge_base_id":{_string(r["knowledge_base_id"])},"name":'
                f'{_string(r["name"])},"revision":{counts[1]},"secret_chunks":'
                f'{"null" if secret is None else "[" + ",".join(map(str, secret)) + "]"},"source_path":'
                f'{_string(r["source_path"])},"source_url":{_string(r["source_url"])},"status":{_string(r["status"])},'
                f'"tags":{canonical(r["tags"])},"token_count":{counts[2]}}}')
    except TypeError:  # a string field that is not a string (or None)
        return None


def _string(value: str | None) -> str:
    return "null" if value is None else encode_basestring(value)
