"""The live-name claims of the DynamoDB memory table in their namespaces (issue 18: personal names are per owner).

A claim's sort key is the memory's `name_key` (models/memory_detail.py): `N#<name>` for the shared visibilities -
the key every claim had before - and `O#<len>:<owner>#<name>` for a personal memory. Claims written before this
change are all `N#<name>`, personal ones included; a live deploy keeps them working without a migration step:
- the owner's next personal revision finds no `O#` claim, reads the old `N#` one, and supersedes that memory when
  it is the writer's own personal memory: the same transaction deletes the old claim (conditional on it still
  naming that memory) and puts the `O#` claim, so the chain moves namespace exactly once;
- a shared write that meets an `N#` claim naming a personal memory never supersedes it: the same transaction moves
  that claim to its owner's `O#` key (conditional both ways) and claims `N#<name>` for the shared memory.
Costs: one more consistent GetItem for a revision of a shared name (its live item's visibility), and for a personal
write whose `O#` claim is absent (the old `N#` claim) - until the table is converted: `agentkb memory repair` moves
every old claim (layout.py) and then marks the table (`MLAYOUT` / `#NAMES`, version 2). A process
reads that mark once (again every LAYOUT_RECHECK_S while it is absent) and, once converted, skips the extra read.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import mid
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n
from agentkb.models.memory.api import MemoryRecord
from agentkb.models.memory.detail import SHARED_NAME, name_key

LAYOUT = ("MLAYOUT", "#NAMES")  # the table's name-claim layout: version 2 = no old-layout personal claim is left
NAMES_CONVERTED = 2
LAYOUT_RECHECK_S = 300.0  # how long an unconverted answer is trusted (a repair may convert the table meanwhile)


@dataclass
class NameClaim:
    """What a new revision supersedes (None: a new name in its namespace) and the claim actions of its write."""

    previous: int | None = None
    revision: int = 1
    actions: list[dict[str, Any]] = field(default_factory=list)


class DynamoDbMemoryNames:
    """Resolves and writes the live-name claim of a new revision, old-layout personal claims included."""

    def __init__(self, db: DynamoDbTable) -> None:
        self.db = db
        self._converted = False
        self._layout_read_at: float | None = None

    def old_claims_possible(self) -> bool:
        """False once the table is known converted (read once per process; rechecked while it is not)."""
        now = time.monotonic()
        if not self._converted and (self._layout_read_at is None or now - self._layout_read_at > LAYOUT_RECHECK_S):
            layout = self.db.get_item(*LAYOUT) or {}
            self._converted = "version" in layout and get_n(layout, "version") >= NAMES_CONVERTED
            self._layout_read_at = now
        return not self._converted

    def claim(self, record: MemoryRecord, memory_id: int) -> NameClaim:
        """The claim a new revision of `record` (id `memory_id`) takes, and the revision it supersedes."""
        ws = f"MW#{record.workspace_id}"
        own = record.name_key
        pointer = self.db.get_item(ws, own)
        out = NameClaim()
        if pointer is None and record.visibility == "personal":
            # an old-layout claim of the writer's own memory? (none left once the table is converted)
            old = self.db.get_item(ws, SHARED_NAME + record.name) if self.old_claims_possible() else None
            if old is not None and self._claimed_key(ws, old) == own:
                out.actions.append(self._conditional("Delete", ws, SHARED_NAME + record.name, old))
                out.previous, out.revision = get_n(old, "memory_id"), get_n(old, "revision") + 1
            out.actions.append(self._put(ws, own, memory_id, out.revision, "attribute_not_exists(pk)"))
            return out
        if pointer is not None and record.visibility != "personal" and self.old_claims_possible():
            moved = self._claimed_key(ws, pointer)
            if moved is not None and moved != own:  # an old-layout personal claim: it moves to its owner's key
                out.actions.append(self._put(ws, moved, get_n(pointer, "memory_id"), get_n(pointer, "revision"),
                                             "attribute_not_exists(pk)"))
                out.actions.append(self._put(ws, own, memory_id, 1, "memory_id = :prev", get_n(pointer, "memory_id")))
                return out
        if pointer is None:
            out.actions.append(self._put(ws, own, memory_id, 1, "attribute_not_exists(pk)"))
            return out
        out.previous, out.revision = get_n(pointer, "memory_id"), get_n(pointer, "revision") + 1
        out.actions.append(self._put(ws, own, memory_id, out.revision, "memory_id = :prev", out.previous))
        return out

    def _claimed_key(self, ws: str, pointer: dict[str, Any]) -> str | None:
        """The namespace key of the memory a claim names (None when that memory is gone)."""
        item = self.db.get_item(ws, "M#" + mid(get_n(pointer, "memory_id")))
        if item is None:
            return None
        return name_key(get_s(item, "visibility") or "", get_s(item, "owner_id"), get_s(item, "name") or "")

    def _put(self, ws: str, sk: str, memory_id: int, revision: int, condition: str,
             prev: int | None = None) -> dict[str, Any]:
        put: dict[str, Any] = {"TableName": self.db.table, "ConditionExpression": condition,
                               "Item": {**key(ws, sk), "memory_id": n(memory_id), "revision": n(revision)}}
        if prev is not None:
            put["ExpressionAttributeValues"] = {":prev": n(prev)}
        return {"Put": put}

    def _conditional(self, verb: str, ws: str, sk: str, pointer: dict[str, Any]) -> dict[str, Any]:
        return {verb: {"TableName": self.db.table, "Key": key(ws, sk), "ConditionExpression": "memory_id = :prev",
                       "ExpressionAttributeValues": {":prev": n(get_n(pointer, "memory_id"))}}}
