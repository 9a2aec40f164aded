"""The demo's agent memories (`make run`): written through the same service as POST /v1/memories."""

from __future__ import annotations

import json
from pathlib import Path

from agentkb.composition import Ports
from agentkb.models.domain import Principal
from agentkb.models.memory.api import MemoryWriteRequest
from agentkb.services.memory.service import MemoryDeps, write_memory


def write_demo_memories(ports: Ports, workspace: str, path: Path, owner: str = "dev") -> int:
    """Write (or leave unchanged: same content is a no-op) every memory in the file; returns how many."""
    writer = Principal(id=owner, workspaces=(workspace,), scopes=("api:read", "api:write"))
    deps = MemoryDeps(ports.memories, ports.graph, ports.embedder)
    memories = json.loads(path.read_text(encoding="utf-8"))
    for body in memories:
        write_memory(MemoryWriteRequest.model_validate({**body, "workspace_id": workspace}), writer, deps)
    return len(memories)
