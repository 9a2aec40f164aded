"""Write-backs larger than one TransactWriteItems (100 items) on DynamoDB, still whole or absent for every reader.

1. stage: a `WB#<stage>` record (status `pending`, the memory ids and names, the start time), then the memories in
   transactions of CHUNK, every item (M#, V#, the N#/O# name claim) carrying `wb = <stage>`. Readers skip such items
   while the record is not `committed` (DynamoDbMemoryMarkers.published).
2. commit: one conditional UpdateItem flips the record to `committed`: the moment the whole write-back appears.
3. publish: `wb` is removed from the items (readers stop looking the record up), then the record gets a TTL of a
   day. A crash in this step is harmless: the record stays `committed` and readers keep resolving through it.
A commit whose answer is lost (or that a retry finds done) is checked on the record: committed is a success.

A failed stage transaction (the k-th as well as the first) discards what was staged: items, name claims, entity
links and the record, so nothing is left behind and a retry finds the names free. Every discard first flips the
record `pending` -> `aborted` (conditional), so a discard and the commit (conditional on `pending`) never both win.
A stage left by a crashed writer stays invisible until sweep.py reclaims it (after STAGE_LEASE_S).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import meta_update, mid, revision_items, summary
from agentkb.adapters.aws.dynamodb.memory.markers import DynamoDbMemoryMarkers
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, guarded, key, n, s
from agentkb.errors import WriteConflict
from agentkb.models.memory.api import MemoryRecord, StoredMemory

CHUNK = 24  # memories per transaction: 4 items each (claim, record, vector, index marker), the meta update and the
#            stage record's condition check: 98 <= 100
TX_ITEMS = 100  # DynamoDB's TransactWriteItems limit
STAGE_LEASE_S = 300.0  # far past the ingest function's 60 s timeout: an older pending stage has no living writer
PUBLISHED_TTL_S = 86_400  # a published stage's record outlives every read that could still look it up
NAME_TAKEN = "A memory of the same name exists already"
Action = dict[str, Any]
log = logging.getLogger("agentkb.memory_store")


class DynamoDbMemoryStaging:
    """Builds a memory's transaction items and writes a batch of them in one transaction or as a staged write-back."""

    def __init__(self, db: DynamoDbTable, markers: DynamoDbMemoryMarkers) -> None:
        self.db = db
        self.markers = markers

    def _memory_actions(self, r: MemoryRecord, memory_id: int,
                        stage: str | None) -> tuple[list[Action], list[dict[str, Any]], StoredMemory]:
        """The new name's claim, record, vector (and index marker) of one memory, and its entity link items."""
        item, vector, links = revision_items(r, memory_id, 1, None)
        claim = {**key(f"MW#{r.workspace_id}", r.name_key), "memory_id": n(memory_id), "revision": n(1)}
        if stage is not None:
            for staged in (claim, item, vector):
                staged["wb"] = s(stage)
        table = self.db.table
        actions: list[Action] = [{"Put": {"TableName": table, "Item": claim,
                                          "ConditionExpression": "attribute_not_exists(pk)"}},
                                 {"Put": {"TableName": table, "Item": item}},
                                 {"Put": {"TableName": table, "Item": vector}}]
        actions += [{"Put": {"TableName": table, "Item": marker}}
                    for marker in self.markers.unindexed_items(r.workspace_id, memory_id)]
        return actions, links, summary(item)

    def write(self, records: Sequence[MemoryRecord], first: int, stage: str | None) -> list[StoredMemory]:
        """One transaction of up to CHUNK new names (their workspace's meta update with the first chunk)."""
        actions: list[Action] = []
        links: list[dict[str, Any]] = []
        out: list[StoredMemory] = []
        for offset, r in enumerate(records):
            memory, linked, stored = self._memory_actions(r, first + offset, stage)
            actions += memory
            links += linked
            out.append(stored)
        if stage is None or stage == mid(first):
            actions += [{"Update": {"TableName": self.db.table, **meta_update(r)}}
                        for r in {r.workspace_id: r for r in records}.values()]
        if stage is not None:  # nothing more is staged once a sweep aborted the stage (its writer was too slow)
            actions.append({"ConditionCheck": {
                "TableName": self.db.table, "Key": key(f"MW#{records[0].workspace_id}", f"WB#{stage}"),
                "ConditionExpression": "#s = :p", "ExpressionAttributeNames": {"#s": "status"},
                "ExpressionAttributeValues": {":p": s("pending")}}})
        # Links first, in one BatchWriteItem run: a link to an id no reader sees yet is inert (reads intersect
        # with visible items), and a discard deletes them.
        self.db.batch_write([{"PutRequest": {"Item": link}} for link in links])
        self.db.transact(actions, conflict=NAME_TAKEN)
        return out

    def write_staged(self, records: Sequence[MemoryRecord], first: int) -> list[StoredMemory]:
        """Stage, commit, publish (module docstring); on any failure before the commit nothing stays behind."""
        ws, stage = records[0].workspace_id, mid(first)
        names = [r.name_key for r in records]  # the claim keys (name_key): stage records of old carry `names`
        # `entities`: a stage's links are written before its items, so a sweep finds them only through the record
        entities = sorted({e for r in records for e in r.entity_ids})
        record = {**key(f"MW#{ws}", f"WB#{stage}"), "status": s("pending"), "first": n(first),
                  "keys": {"L": [s(name) for name in names]}, "entities": {"L": [s(e) for e in entities]},
                  "started": n(time.time())}
        guarded(self.db.store, lambda: self.db.client.put_item(TableName=self.db.table, Item=record,
                                                               ConditionExpression="attribute_not_exists(pk)"))
        out: list[StoredMemory] = []
        try:
            for start in range(0, len(records), CHUNK):
                out += self.write(records[start:start + CHUNK], first + start, stage)
            self.db.update(Key=key(f"MW#{ws}", f"WB#{stage}"), UpdateExpression="SET #s = :c",
                           ConditionExpression="#s = :p", ExpressionAttributeNames={"#s": "status"},
                           ExpressionAttributeValues={":c": s("committed"), ":p": s("pending")})
        except Exception as exc:
            # A commit whose answer was lost (or whose retry found it done) did happen: then this is a success.
            status = self._status(ws, stage)
            if status != "committed":
                # Unreadable (None): left as it is for the sweep after the lease. Aborted or missing: a sweep took
                # the stage (this writer outlived the lease); the discard is idempotent and also takes the entity
                # links this writer wrote after the sweep's discard.
                if status in ("pending", "aborted", "missing"):
                    self._discard_quietly(ws, stage, records, first)
                if status in ("aborted", "missing"):  # a writer slower than the lease: a retry stores it afresh
                    raise WriteConflict("the write-back's stage was reclaimed before its commit") from exc
                raise
        self._publish(ws, stage, list(range(first, first + len(records))), names)
        return out

    def _status(self, ws: str, stage: str) -> str | None:
        """The stage record's status ("missing" without one); None when it cannot be read."""
        try:
            record = self.db.get_item(f"MW#{ws}", f"WB#{stage}")
        except Exception:
            return None
        return (get_s(record, "status") or "missing") if record else "missing"

    def abort(self, ws: str, stage: str, started_before: float | None = None) -> bool:
        """Flip a pending stage record to `aborted` (only one started before `started_before` when given): after
        it the stage can never commit. False when the record is not pending (or too young) any more."""
        condition, values = "#s = :p", {":a": s("aborted"), ":p": s("pending")}
        if started_before is not None:
            condition, values[":t"] = condition + " AND started < :t", n(started_before)
        return self.db.conditional(lambda: self.db.client.update_item(
            TableName=self.db.table, Key=key(f"MW#{ws}", f"WB#{stage}"), UpdateExpression="SET #s = :a",
            ConditionExpression=condition, ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues=values))

    def _discard_quietly(self, ws: str, stage: str, records: Sequence[MemoryRecord], first: int) -> None:
        try:
            self.abort(ws, stage)  # not pending any more: aborted by a sweep already (a commit was ruled out)
            self.discard(ws, stage, list(range(first, first + len(records))), [r.name_key for r in records],
                         {(e, first + i) for i, r in enumerate(records) for e in r.entity_ids})
        except Exception:  # what stays is invisible, and a retry reclaims it after the lease
            log.warning("could not discard a failed write-back stage", extra={"workspace_id": ws, "stage": stage})

    def _publish(self, ws: str, stage: str, ids: list[int], names: list[str]) -> None:
        """Drop `wb` from the committed items (transactions of <= 100 updates), then let the record expire (TTL)
        long after any reader that saw `wb` looked it up (deleting it at once could hide a committed memory from a
        read in flight). Best effort: an item deleted meanwhile fails its transaction, and then the record stays,
        committed and without TTL, for readers."""
        keys = [key(f"MW#{ws}", p + mid(i)) for i in ids for p in ("M#", "V#")] + [
            key(f"MW#{ws}", name) for name in names]
        updates = [{"Update": {"TableName": self.db.table, "Key": k, "UpdateExpression": "REMOVE wb",
                               "ConditionExpression": "attribute_exists(pk)"}} for k in keys]
        try:
            for start in range(0, len(updates), TX_ITEMS):
                self.db.transact(updates[start:start + TX_ITEMS], conflict=NAME_TAKEN)
            self.db.update(Key=key(f"MW#{ws}", f"WB#{stage}"), UpdateExpression="SET #t = :t",
                           ExpressionAttributeNames={"#t": "ttl"},
                           ExpressionAttributeValues={":t": n(int(time.time()) + PUBLISHED_TTL_S)})
        except Exception:  # committed and visible: the record keeps resolving what still carries `wb`
            log.warning("write-back published in part", extra={"workspace_id": ws, "stage": stage})

    def discard(self, ws: str, stage: str, ids: list[int], names: list[str], links: set[tuple[str, int]]) -> None:
        """Delete a stage that never committed: its items, the name claims it holds, entity links, then its record."""
        found = self.db.batch_get([key(f"MW#{ws}", "M#" + mid(i)) for i in ids], consistent=True)
        links |= {(e, get_n(item, "memory_id")) for item in found
                  for e in json.loads(get_s(item, "entity_ids") or "[]")}
        claims = self.db.batch_get([key(f"MW#{ws}", name) for name in names], consistent=True)
        keys = [key(f"MW#{ws}", p + mid(i)) for i in ids for p in ("M#", "V#", "P#~")]
        keys += [key(f"ME#{ws}#{e}", mid(i)) for e, i in sorted(links)]
        keys += [key(f"MW#{ws}", get_s(c, "sk") or "") for c in claims if get_n(c, "memory_id") in ids]
        self.db.batch_write([{"DeleteRequest": {"Key": k}} for k in keys])
        # last, so a discard that dies half-way is found again; never a record that committed
        self.db.conditional(lambda: self.db.client.delete_item(
            TableName=self.db.table, Key=key(f"MW#{ws}", f"WB#{stage}"),
            ConditionExpression="attribute_not_exists(#s) OR #s <> :c", ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":c": s("committed")}))
