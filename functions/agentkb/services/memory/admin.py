"""The /v1 memory surface beyond writes: list (filters, paging), get, and forget (`DELETE`).

Forgetting removes every revision of the memory's name from the store, its vectors and text index, the OpenSearch
memory index and its memory<->entity links; graph entities shared with other memories stay. Recall traces only
ever held memory ids and scores, so nothing of the memory's content survives anywhere.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace

from agentkb.errors import BadRequest, NotFound
from agentkb.models.digits import ascii_int
from agentkb.models.domain import Principal
from agentkb.models.memory.api import SENSITIVITY_BITS, MemoryGetResponse, MemoryItem, MemoryListResponse
from agentkb.models.memory.detail import MemoryDetail, MemoryListQuery
from agentkb.ports.memory import MemoryStore
from agentkb.services.ob1.memory import iso
from agentkb.services.ob1.review import memory_id

STATUSES = ("live", "superseded", "stale", "unconfirmed")


def memory_item(d: MemoryDetail) -> MemoryItem:
    """A stored memory as the /v1 surface shows it."""
    return MemoryItem(
        memory_id=d.memory_id, name=d.name, revision=d.revision, workspace_id=d.workspace_id,
        project_id=d.project_id, visibility=d.visibility, owner_id=d.owner_id, channel_id=d.channel_id, type=d.type,
        description=d.description, body=d.body, confirmed=d.confirmed, stale=d.stale, superseded=d.superseded,
        supersedes=d.supersedes, valid_until=iso(d.valid_until),
        sensitivity={name: bool(d.sensitivity & bit) for name, bit in SENSITIVITY_BITS.items()},
        source=d.source, entity_ids=list(d.entity_ids), relation_count=d.relation_count, created_at=d.created_at,
        updated_at=iso(d.updated_at), occurred_at=d.occurred_at)


def encode_cursor(before_id: int | None) -> str | None:
    return None if before_id is None else base64.urlsafe_b64encode(f"m:{before_id}".encode()).decode()


def decode_cursor(cursor: str | None) -> int | None:
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    before = ascii_int(text[2:]) if text.startswith("m:") else None
    if before is None:
        raise BadRequest("Invalid cursor", details=[{"path": "cursor", "message": "use a nextCursor value"}])
    return before


def list_memories(query: MemoryListQuery, principal: Principal, store: MemoryStore) -> MemoryListResponse:
    if not principal.can_reach(query.workspace_id):
        raise NotFound("Workspace not found")
    # Personal memories stay their owner's: the rule is inside the store's query, so a page is full.
    page = store.list_memories(replace(query, viewer=principal.id))
    return MemoryListResponse(data=[memory_item(d) for d in page.items],
                              nextCursor=encode_cursor(page.next_before_id))


def get_memory(workspace_id: str, raw_id: str, principal: Principal, store: MemoryStore) -> MemoryGetResponse:
    found = store.get(workspace_id, memory_id(raw_id), principal.id) if principal.can_reach(workspace_id) else None
    if found is None:
        raise NotFound("Memory not found")
    return MemoryGetResponse(data=memory_item(found))


def forget_memory(workspace_id: str, raw_id: str, principal: Principal, store: MemoryStore) -> list[int]:
    """Delete the memory everywhere; the revision ids forgotten (404 when none)."""
    found = store.get(workspace_id, memory_id(raw_id), principal.id) if principal.can_reach(workspace_id) else None
    deleted = store.delete(workspace_id, found.memory_id) if found is not None else []
    if not deleted:
        raise NotFound("Memory not found")
    return deleted
