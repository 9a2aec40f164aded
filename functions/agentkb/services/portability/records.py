"""The archive's records (docs/portability.md): each stored thing as one JSON object, and back.

A record never names its workspace (the archive's header does, so an import may rename it) and never holds a
secret or a key hash. Vectors are base64 of little-endian float32, exactly as both engines store them.
"""

from __future__ import annotations

import base64
import struct
import sys
from array import array
from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Any

from agentkb.models.domain import ApiKeyRecord, Chunk, Document, EmbeddingProfile, KnowledgeBase, TagDefinition
from agentkb.models.graph.records import EntityRecord, ProofRecord, RelationRecord
from agentkb.models.memory.api import IdempotencyRecord
from agentkb.models.memory.detail import MemoryDetail
from agentkb.models.recall.trace import RecallTrace, TraceItem
from agentkb.models.snapshot import StoredSnapshot
from agentkb.ports.archive import ArchivedMemory, ArchivedTrace

Record = dict[str, Any]
VECTOR_FIELDS = ("embedding", "profile")  # what re-embedding changes: left out of a section's content digest


LITTLE = sys.byteorder == "little"  # an array('f') holds native float32: the archive's bytes on little-endian hosts


def pack_vector(vector: Sequence[float] | None) -> str | None:
    if vector is None:
        return None
    if isinstance(vector, array) and vector.typecode == "f" and LITTLE:
        return base64.b64encode(vector.tobytes()).decode("ascii")
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
    out = array("f", base64.b64decode(text))
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


def document_record(document: Document, content: str | None) -> Record:
    out = {f.name: getattr(document, f.name) for f in fields(document) if f.name != "workspace_id"}
    out["content"] = content  # not asdict: a record is only serialised, nothing in it needs copying
    out["secret_chunks"] = None if document.secret_chunks is None else list(document.secret_chunks)
    return out


def document_from(record: Record, workspace_id: str) -> Document:
    fields = {**record, "workspace_id": workspace_id}
    if fields["secret_chunks"] is not None:
        fields["secret_chunks"] = tuple(fields["secret_chunks"])
    return Document(**fields)


def chunk_record(chunk: Chunk) -> Record:
    out = {f.name: getattr(chunk, f.name) for f in fields(chunk)}  # not asdict: it deep-copies the vector
    out["pages"] = list(chunk.pages)
    out["embedding"] = pack_vector(chunk.embedding)
    return out


def chunk_from(record: Record) -> Chunk:
    # the vector stays a float32 array('f') of the archive's bytes: the embedded bulk path stores them as they are
    return Chunk(**{**record, "pages": tuple(record["pages"]), "embedding": unpack_array(record["embedding"])})


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
