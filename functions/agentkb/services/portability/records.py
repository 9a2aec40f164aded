"""The archive's records (docs/portability.md): each stored thing as one JSON object, and back.

A record never names its workspace (the archive's header does, so an import may rename it) and never holds a
secret or a key hash. Vectors are base64 of little-endian float32, exactly as both engines store them.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
from array import array
from collections.abc import Sequence
from dataclasses import asdict, fields
from json.encoder import encode_basestring
from typing import Any

from agentkb.models.domain import ApiKeyRecord, Chunk, Document, EmbeddingProfile, KnowledgeBase, TagDefinition
from agentkb.models.graph.records import EntityRecord, ProofRecord, RelationRecord
from agentkb.models.memory.api import IdempotencyRecord
from agentkb.models.memory.detail import MemoryDetail
from agentkb.models.recall.trace import RecallTrace, TraceItem
from agentkb.models.snapshot import StoredSnapshot
from agentkb.ports.archive import ArchivedMemory, ArchivedTrace

try:  # the local extra's SIMD base64: a 384-d vector in ~0.6 us instead of ~2.5 (the same bytes either way)
    from pybase64 import b64decode, b64encode
except ImportError:  # pragma: no cover - an install without the local extra: the standard library's
    from base64 import b64decode, b64encode  # type: ignore[assignment]

Record = dict[str, Any]
VECTOR_FIELDS = ("embedding", "profile")  # what re-embedding changes: left out of a section's content digest


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)  # one, not one per call


def canonical(value: Any) -> str:
    """A record's text in an archive, and what its digests hash: sorted keys, no spaces, UTF-8 as it is."""
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


_EMBEDDING = b',"embedding":'


def without_embedding(text: bytes) -> bytes | None:
    """A canonical chunk record's text without its embedding member (None: no such member). Keys are sorted, every
    member before `embedding` is a number or a string (chunk_index, content, content_hash, context, document_id)
    and a string's quotes are escaped, so the first `,"embedding":` is the member; its value is null or base64."""
    at = text.find(_EMBEDDING)
    start = at + len(_EMBEDDING)
    if at >= 0 and text.startswith(b"null", start):
        return text[:at] + text[start + 4:]
    end = text.find(b'"', start + 1) + 1 if at >= 0 and text.startswith(b'"', start) else 0
    return text[:at] + text[end:] if end else None


def chunk_texts(r: Record, text: str | None = None) -> tuple[bytes, bytes] | None:
    """(canonical, canonical without the embedding) of a chunk record, UTF-8, each made once: from its text when
    given, else member by member (_chunk_texts). None when a field is not of a chunk's type: then the general path
    serialises it."""
    if text is not None:
        full = text.encode("utf-8")
        content = without_embedding(full)
        return None if content is None else (full, content)
    vector, pages = r["embedding"], r["pages"]
    if type(pages) is not list or type(vector) not in (str, type(None)):
        return None
    member = b"null" if vector is None else encode_basestring(vector).encode("utf-8")
    return _chunk_texts(r["chunk_index"], r["content"], r["content_hash"], r["context"], r["document_id"], r["id"],
                        pages, r["secret"], r["token_count"], member)


def chunk_texts_of(c: Chunk) -> tuple[bytes, bytes] | None:
    """chunk_texts(chunk_record(c)) without the record: what an export writes and an import's read-back digests."""
    vector = c.embedding
    if vector is None:
        member = b"null"
    elif isinstance(vector, array) and vector.typecode == "f" and LITTLE:
        member = b'"' + b64encode(vector.tobytes()) + b'"'
    else:
        member = b'"' + (pack_vector(vector) or "").encode("ascii") + b'"'
    return _chunk_texts(c.chunk_index, c.content, c.content_hash, c.context, c.document_id, c.id, c.pages, c.secret,
                        c.token_count, member)


def _chunk_texts(index: Any, content: Any, content_hash: Any, context: Any, document_id: Any, chunk_id: Any,
                 pages: Sequence[Any], secret: Any, tokens: Any, member: bytes) -> tuple[bytes, bytes] | None:
    """A chunk record's canonical texts member by member in sorted key order, with json's own string escaping
    (3x faster than the encoder on this one shape); None when a value is not of a chunk's type."""
    if not (all(type(v) is int for v in (index, tokens, *pages)) and type(secret) is bool):
        return None
    try:
        head = (f'{{"chunk_index":{index},"content":{encode_basestring(content)},"content_hash":'
                f'{encode_basestring(content_hash)},"context":{encode_basestring(context)},"document_id":'
                f'{encode_basestring(document_id)}').encode()
        tail = (f',"id":{encode_basestring(chunk_id)},"pages":[{",".join(map(str, pages))}],"secret":'
                f'{"true" if secret else "false"},"token_count":{tokens}}}').encode()
    except TypeError:  # a string field that is not a string
        return None
    return head + b',"embedding":' + member + tail, head + tail


LITTLE = sys.byteorder == "little"  # an array('f') holds native float32: the archive's bytes on little-endian hosts


def pack_vector(vector: Sequence[float] | None) -> str | None:
    if vector is None:
        return None
    if isinstance(vector, array) and vector.typecode == "f" and LITTLE:
        return b64encode(vector.tobytes()).decode("ascii")
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")


def unpack_vector(text: str | None) -> list[float] | None:
    if text is None:
        return None
    raw = base64.b64decode(text)
    return list(struct.unpack(f"<{len(raw) // 4}f", raw))


def unpack_array(text: str | None) -> array[float] | None:
    """A chunk's vector as a float32 array of the decoded bytes: the bulk path stores those bytes as they are."""
    if text is None:
        return None
    out = array("f", b64decode(text))
    if not LITTLE:
        out.byteswap()
    return out


def kb_record(kb: KnowledgeBase) -> Record:
    return {"id": kb.id, "name": kb.name, "description": kb.description,
            "profile": {"model": kb.profile.model, "dimension": kb.profile.dimension},
            "tag_definitions": [asdict(t) for t in kb.tag_definitions], "created_at": kb.created_at,
            "secret_policy": kb.secret_policy}


def kb_from(record: Record, workspace_id: str, profile: EmbeddingProfile | None = None) -> KnowledgeBase:
    stored = EmbeddingProfile(record["profile"]["model"], int(record["profile"]["dimension"]))
    return KnowledgeBase(record["id"], workspace_id, record["name"], record["description"], profile or stored,
                         tuple(TagDefinition(**t) for t in record["tag_definitions"]), record["created_at"],
                         record["secret_policy"])


_DOCUMENT_FIELDS = tuple(f.name for f in fields(Document) if f.name != "workspace_id")


def document_record(document: Document, content: str | None) -> Record:
    out = {name: getattr(document, name) for name in _DOCUMENT_FIELDS}
    out["content"] = content  # not asdict: a record is only serialised, nothing in it needs copying
    out["secret_chunks"] = None if document.secret_chunks is None else list(document.secret_chunks)
    return out


def document_from(record: Record, workspace_id: str) -> Document:
    fields = {**record, "workspace_id": workspace_id}
    if fields["secret_chunks"] is not None:
        fields["secret_chunks"] = tuple(fields["secret_chunks"])
    return Document(**fields)


CHUNK_FIELDS = tuple(f.name for f in fields(Chunk))  # a chunk record's keys, and nothing else
CHUNK_KEYS = frozenset(CHUNK_FIELDS)


def chunk_record(c: Chunk) -> Record:
    return {"id": c.id, "document_id": c.document_id, "chunk_index": c.chunk_index, "content": c.content,
            "token_count": c.token_count, "content_hash": c.content_hash, "embedding": pack_vector(c.embedding),
            "pages": list(c.pages), "context": c.context, "secret": c.secret}  # not asdict: it copies the vector


def chunk_from(r: Record) -> Chunk:
    # the vector stays a float32 array('f') of the archive's bytes: the embedded bulk path stores them as they are
    if r.keys() != CHUNK_KEYS:
        raise TypeError(f"a chunk record has the fields {sorted(CHUNK_FIELDS)}, not {sorted(r)}")
    return Chunk(r["id"], r["document_id"], r["chunk_index"], r["content"], r["token_count"], r["content_hash"],
                 unpack_array(r["embedding"]), tuple(r["pages"]), r["context"], r["secret"])



def memory_record(memory: ArchivedMemory) -> Record:
    out = asdict(memory.detail)
    out.pop("workspace_id")
    out["entity_ids"] = list(memory.detail.entity_ids)
    out.update(request_hash=memory.request_hash, embedding=pack_vector(memory.embedding),
               idempotency=[asdict(k) for k in memory.idempotency])
    return out


def memory_from(record: Record, workspace_id: str) -> ArchivedMemory:
    fields = dict(record)
    request_hash, embedding = fields.pop("request_hash"), unpack_vector(fields.pop("embedding")) or []
    keys = tuple(IdempotencyRecord(**k) for k in fields.pop("idempotency"))
    fields["entity_ids"] = tuple(fields["entity_ids"])
    return ArchivedMemory(MemoryDetail(**fields, workspace_id=workspace_id), request_hash, embedding, keys)


def entity_record(entity: EntityRecord) -> Record:
    return asdict(entity)


def entity_from(record: Record) -> EntityRecord:
    return EntityRecord(**{**record, "aliases": tuple(record["aliases"]), "proof_ids": tuple(record["proof_ids"])})


def relation_from(record: Record) -> RelationRecord:
    return RelationRecord(**{**record, "proof_ids": tuple(record["proof_ids"])})


def proof_from(record: Record) -> ProofRecord:
    return ProofRecord(**record)


def snapshot_record(snapshot: StoredSnapshot) -> Record:
    return {"snapshot_id": snapshot.snapshot_id, "run_id": snapshot.run_id, "attempt_id": snapshot.attempt_id,
            "request_hash": snapshot.request_hash, "created_at": snapshot.created_at,
            "body": base64.b64encode(snapshot.body).decode("ascii")}


def snapshot_from(record: Record, workspace_id: str) -> StoredSnapshot:
    return StoredSnapshot(record["snapshot_id"], workspace_id, record["run_id"], record["attempt_id"],
                          record["request_hash"], base64.b64decode(record["body"]), record["created_at"])


def trace_record(archived: ArchivedTrace) -> Record:
    out = asdict(archived.trace)
    out.pop("workspace_id")
    out["usage"] = [list(u) for u in archived.usage]
    return out


def trace_from(record: Record, workspace_id: str) -> ArchivedTrace:
    fields = dict(record)
    usage = tuple((int(m), bool(used), float(at)) for m, used, at in fields.pop("usage"))
    items = tuple(TraceItem(**item) for item in fields.pop("items"))
    return ArchivedTrace(RecallTrace(**fields, workspace_id=workspace_id, items=items), usage)


def key_record(key: ApiKeyRecord) -> Record:
    """A key's metadata: never its hash (an archive holds nothing that authenticates)."""
    return {"key_id": key.key_id, "principal": key.principal, "workspaces": list(key.workspaces),
            "scopes": list(key.scopes), "created_at": key.created_at, "revoked": key.revoked}
