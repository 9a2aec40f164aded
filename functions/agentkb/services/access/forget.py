"""Forget one person in one workspace (`agentkb forget`, `DELETE /v1/principals/{principalId}`): their personal
memories (every revision, with vectors, index entries and entity links), their recall traces and usage events,
their memory idempotency keys and their API keys that reach the workspace. Other principals' data is untouched:
shared memories a person wrote stay (they belong to the workspace), and so do other people's traces."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkb.errors import BadRequest, NotFound
from agentkb.models.domain import Principal

if TYPE_CHECKING:
    from agentkb.composition import Ports


def forget_principal(ports: Ports, workspace_id: str, principal_id: str, caller: Principal | None = None) -> dict[
        str, int]:
    """Remove everything of `principal_id` in the workspace; the counts of what went. `caller` (an HTTP request's
    principal) must reach the workspace (404 otherwise, as for any resource it cannot see)."""
    if not principal_id.strip():
        raise BadRequest("A principal id is required", details=[{"path": "principalId", "message": "empty"}])
    if caller is not None and not caller.can_reach(workspace_id):
        raise NotFound("Workspace not found")
    removed: set[int] = set()
    for memory_id in ports.archive.owned_memories(workspace_id, principal_id):
        if memory_id not in removed:
            removed.update(ports.memories.delete(workspace_id, memory_id))
    counts = {"memories": len(removed), **ports.archive.forget_principal(workspace_id, principal_id)}
    keys = [k for k in ports.keys.list_keys() if k.principal == principal_id and workspace_id in k.workspaces]
    counts["keys"] = sum(ports.keys.delete_key(k.key_id) for k in keys)
    return counts
