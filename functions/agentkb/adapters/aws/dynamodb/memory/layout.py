"""Bulk conversion of old-layout personal name claims on the memory table (`agentkb memory repair`).

Before issue 18 every live-name claim was `N#<name>`, personal ones included; names.py converts
such a claim lazily, on the next write of that name, which costs the write path one more consistent GetItem (the
claimed memory's visibility, or the old claim) for as long as old claims may exist. `convert_names` moves every
remaining one at once:
- a Scan of the table's `N#` claims (FilterExpression; paged, `pages` per call; it reads the whole table once, so
  its RCUs are the table's size), the memories they name read in BatchGetItems, each claim that names a personal
  memory moved to its owner's `O#` key in one transaction (delete conditional on the claim still naming that memory,
  put conditional on the `O#` key being free: a concurrent lazy conversion or shared write wins cleanly);
- resumable: after each page the Scan's position is saved in the layout item (`MLAYOUT` / `#NAMES`), and the next
  call starts there; idempotent: a claim already moved is not found again;
- when a whole pass found nothing left to move, the layout item says `version = 2`. Write paths read that item
  once per process (names.py) and then skip the fallback read; an unconverted table keeps the lazy
  path, so old tables work at every step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import mid
from agentkb.adapters.aws.dynamodb.memory.names import LAYOUT, NAMES_CONVERTED
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n, s
from agentkb.models.memory.detail import name_key

SCAN_PAGE = 1000  # items a Scan page evaluates (the filter keeps the N# claims among them)


@dataclass
class NameConversion:
    """What a conversion call did: claims read and moved, claims it could not move, whether the table is done."""

    scanned: int = 0
    moved: int = 0
    left: list[str] = field(default_factory=list)  # "<workspace>/<name>": moved by no one (an O# key in the way)
    converted: bool = False
    resumable: bool = False  # stopped after `pages`: call again to continue


class DynamoDbMemoryLayout:
    """convert_names: the bulk, resumable conversion (module docstring)."""

    def __init__(self, db: DynamoDbTable) -> None:
        self.db = db

    def convert_names(self, *, pages: int | None = None) -> NameConversion:
        """Move every old-layout personal claim to its owner's key; at most `pages` Scan pages per call."""
        out = NameConversion()
        state = self.db.get_item(*LAYOUT) or {}
        if "version" in state and get_n(state, "version") >= NAMES_CONVERTED:
            out.converted = True
            return out
        kwargs: dict[str, Any] = {
            "ConsistentRead": True, "Limit": SCAN_PAGE,
            "FilterExpression": "begins_with(pk, :mw) AND begins_with(sk, :n)",
            "ExpressionAttributeValues": {":mw": s("MW#"), ":n": s("N#")}}
        if get_s(state, "cursor"):
            kwargs["ExclusiveStartKey"] = json.loads(get_s(state, "cursor") or "{}")
        clean = state.get("clean", {}).get("BOOL", True)  # nothing was left behind earlier in this pass
        read = 0
        while pages is None or read < pages:
            page = self.db.scan_page(**kwargs)
            read += 1
            claims = page.get("Items", [])
            named = self._named_memories(claims)
            for claim in claims:
                out.scanned += 1
                moved = self._convert(claim, named.get((get_s(claim, "pk") or "", get_n(claim, "memory_id"))))
                if moved is None:
                    out.left.append(f"{(get_s(claim, 'pk') or '')[3:]}/{(get_s(claim, 'sk') or '')[2:]}")
                out.moved += bool(moved)
            clean = clean and not out.left
            if "LastEvaluatedKey" not in page:
                self._save_layout(None, clean)
                out.converted = clean
                return out
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            self._save_layout(page["LastEvaluatedKey"], clean)
        out.resumable = True
        return out

    def _named_memories(self, claims: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
        """The M# items a page of claims names, in BatchGetItem calls of 100 (not a GetItem per claim)."""
        keys = list({(get_s(c, "pk") or "", get_n(c, "memory_id")): None for c in claims})
        items = self.db.batch_get([key(ws, "M#" + mid(i)) for ws, i in keys], consistent=True)
        return {(get_s(i, "pk") or "", get_n(i, "memory_id")): i for i in items}

    def _convert(self, claim: dict[str, Any], item: dict[str, Any] | None) -> bool | None:
        """Move one claim when it names a personal memory: True moved, False nothing to move, None left behind."""
        ws, sk = get_s(claim, "pk") or "", get_s(claim, "sk") or ""
        owner_key = None if item is None else name_key(get_s(item, "visibility") or "", get_s(item, "owner_id"),
                                                       get_s(item, "name") or "")
        if owner_key is None or owner_key == sk:
            return False  # a shared memory's claim (or one whose memory is gone): it stays where it is
        moved = {k: v for k, v in claim.items() if k not in ("pk", "sk")}
        table = self.db.table
        if self.db.conditional(lambda: self.db.client.transact_write_items(TransactItems=[
                {"Delete": {"TableName": table, "Key": key(ws, sk), "ConditionExpression": "memory_id = :m",
                            "ExpressionAttributeValues": {":m": n(get_n(claim, "memory_id"))}}},
                {"Put": {"TableName": table, "Item": {**key(ws, owner_key), **moved},
                         "ConditionExpression": "attribute_not_exists(pk)"}}])):
            return True
        again = self.db.get_item(ws, sk)  # a concurrent write moved or replaced it: fine unless it is still there
        still = again is not None and get_n(again, "memory_id") == get_n(claim, "memory_id")
        return None if still else False

    def _save_layout(self, cursor: dict[str, Any] | None, clean: bool) -> None:
        """The Scan's position after a page; at the end of a pass (cursor None) the converted version when the
        pass left nothing behind, else a fresh start for the next pass."""
        if cursor is None:
            update = "SET version = :v, clean = :c REMOVE #cursor"
            values: dict[str, Any] = {":v": n(NAMES_CONVERTED if clean else 1), ":c": {"BOOL": True}}
        else:
            update = "SET version = :v, clean = :c, #cursor = :k"
            values = {":v": n(1), ":c": {"BOOL": clean}, ":k": s(json.dumps(cursor))}
        self.db.update(Key=key(*LAYOUT), UpdateExpression=update, ExpressionAttributeNames={"#cursor": "cursor"},
                       ExpressionAttributeValues=values)
