"""Reclaiming staged write-backs (staging.py) whose writer died before its commit.

Such a stage is invisible (its `WB#` record never says `committed`) but holds its items, name claims and entity
links. A sweep removes it without ever touching a stage that may still commit:
- one conditional UpdateItem flips the record `pending` -> `aborted`, only while it is pending and started more
  than STAGE_LEASE_S ago (far past the ingest function's timeout: no writer can still be at work on it). The
  writer's commit is conditional on `pending` too, so exactly one of the two wins: committed (the sweep leaves it
  alone) or aborted (the late commit fails, its writer answers an error, the memories never appear); its stage
  transactions check the record too, so nothing is staged after the abort;
- then the aborted stage is discarded: items, the claims naming its ids, entity links, index markers, and the
  record last (never a committed one). A sweep that dies half-way leaves the record `aborted`; the next one
  finishes it (every delete is idempotent).
A stage that committed but whose writer died while publishing (items still carry `wb`, the record has no TTL) is
whole and visible already; the full sweep of `agentkb memory repair` finishes its publication (`wb` removed from
the items still carrying it, then the record's TTL), so readers stop resolving those items through the record.
Who sweeps: a staged write-back, once committed, looks at up to SWEEP_PAGE other stage records of its workspace
(one Query page, resuming where this process stopped last time); a write-back whose names an abandoned stage holds
reclaims that stage before it retries; `agentkb memory repair` sweeps every stage record of a workspace.
A concurrent duplicate (names held by a stage younger than the lease) is refused with 409 + Retry-After.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentkb.adapters.aws.dynamodb.memory import staging as limits  # read at call time (tests shorten the lease)
from agentkb.adapters.aws.dynamodb.memory.items import mid
from agentkb.adapters.aws.dynamodb.memory.staging import DynamoDbMemoryStaging
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n, s
from agentkb.errors import WriteInProgress
from agentkb.models.memory.detail import SHARED_NAME

SWEEP_PAGE = 25  # stage records a write-back's sweep reads (committed ones expire a day after their commit)
log = logging.getLogger("agentkb.memory_store")


@dataclass
class SweepReport:
    """What a sweep saw: stage records read, abandoned stages discarded, stages left that may still commit."""

    read: int = 0
    swept: int = 0
    live: int = 0
    published: int = 0  # committed stages whose publication a full sweep finished


class DynamoDbMemorySweep:
    """Finds abandoned stages of a workspace and discards them (module docstring)."""

    def __init__(self, db: DynamoDbTable, staging: DynamoDbMemoryStaging) -> None:
        self.db = db
        self.staging = staging
        self._cursors: dict[str, dict[str, Any]] = {}  # workspace -> where its next bounded sweep starts

    def sweep_stages(self, workspace_id: str, *, pages: int | None = None) -> SweepReport:
        """Discard the abandoned stages of a workspace: every stage record (pages=None, the repair path) or `pages`
        Query pages of SWEEP_PAGE records, continuing from where the previous bounded sweep of this process ended."""
        report = SweepReport()
        cursors = self._cursors
        kwargs: dict[str, Any] = {
            "ConsistentRead": True, "Limit": SWEEP_PAGE,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :wb)",
            "FilterExpression": "#s <> :c" if pages is not None else "#s <> :c OR attribute_not_exists(#t)",
            "ExpressionAttributeNames": {"#s": "status", **({} if pages is not None else {"#t": "ttl"})},
            "ExpressionAttributeValues": {":pk": s(f"MW#{workspace_id}"), ":wb": s("WB#"), ":c": s("committed")}}
        if pages is not None and workspace_id in cursors:
            kwargs["ExclusiveStartKey"] = cursors.pop(workspace_id)
        read = 0
        while pages is None or read < pages:
            page = self.db.query_page(**kwargs)
            read += 1
            for record in page.get("Items", []):
                report.read += 1
                if get_s(record, "status") == "committed":
                    report.published += self._finish_publication(workspace_id, record)
                elif self.settle(workspace_id, record):
                    report.swept += 1
                else:
                    report.live += 1
            if "LastEvaluatedKey" not in page:
                return report
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        cursors[workspace_id] = kwargs["ExclusiveStartKey"]
        return report

    def sweep_quietly(self, workspace_id: str) -> None:
        """The bounded sweep a committed staged write-back runs: its failure is logged, never the write's."""
        try:
            swept = self.sweep_stages(workspace_id, pages=1).swept
        except Exception:
            log.warning("stage sweep failed", extra={"workspace_id": workspace_id})
            return
        if swept:
            log.info("abandoned write-back stages swept", extra={"workspace_id": workspace_id, "stages": swept})

    def settle(self, ws: str, record: dict[str, Any]) -> bool:
        """Discard the stage of this record when it is abandoned; False when it may still commit (or did)."""
        stage, status = (get_s(record, "sk") or "")[3:], get_s(record, "status")
        if status == "pending" and not self.staging.abort(ws, stage, time.time() - limits.STAGE_LEASE_S):
            return False  # young (its writer may be at work), or committed/aborted since the read
        if status not in ("pending", "aborted"):
            return False
        names, first = _stage_keys(record), get_n(record, "first")
        ids = list(range(first, first + len(names)))
        entities = [v["S"] for v in record.get("entities", {}).get("L", [])]
        self.staging.discard(ws, stage, ids, names, {(e, i) for e in entities for i in ids})
        return True

    def _finish_publication(self, ws: str, record: dict[str, Any]) -> bool:
        """Remove `wb` from the committed stage's items still carrying it (transactions of TX_ITEMS; one by one
        where an item was forgotten since), then let the record expire. Only past the lease: its writer is gone."""
        if "ttl" in record or time.time() - float(record["started"]["N"]) < limits.STAGE_LEASE_S:
            return False
        stage, names, first = (get_s(record, "sk") or "")[3:], _stage_keys(record), get_n(record, "first")
        keys = [key(f"MW#{ws}", p + mid(i)) for i in range(first, first + len(names)) for p in ("M#", "V#")]
        updates = [{"TableName": self.db.table, "Key": k, "UpdateExpression": "REMOVE wb", "ConditionExpression":
                    "wb = :w", "ExpressionAttributeValues": {":w": s(stage)}}
                   for k in keys + [key(f"MW#{ws}", name) for name in names]]
        for start in range(0, len(updates), limits.TX_ITEMS):
            part = updates[start:start + limits.TX_ITEMS]
            if not self.db.conditional(lambda part=part: self.db.client.transact_write_items(  # type: ignore[misc]
                    TransactItems=[{"Update": u} for u in part])):
                for update in part:  # some item no longer carries `wb` (forgotten, or published already)
                    self.db.conditional(lambda update=update: self.db.client.update_item(**update))  # type: ignore[misc]
        self.db.update(Key=key(f"MW#{ws}", f"WB#{stage}"), UpdateExpression="SET #t = :t",
                       ExpressionAttributeNames={"#t": "ttl"},
                       ExpressionAttributeValues={":t": n(int(time.time()) + limits.PUBLISHED_TTL_S)})
        return True

    def reclaim(self, ws: str, names: Sequence[str]) -> bool:
        """Discard the abandoned stages holding any of these names. True when one was discarded; WriteInProgress
        when a stage that may still commit holds one (a concurrent duplicate: retrying after it commits replays)."""
        claims = self.db.batch_get([key(f"MW#{ws}", name) for name in names], consistent=True)
        stages = {get_s(c, "wb") or "" for c in claims if "wb" in c}
        if not stages:
            return False
        records = {(get_s(r, "sk") or "")[3:]: r for r in self.db.batch_get(
            [key(f"MW#{ws}", f"WB#{w}") for w in sorted(stages)], consistent=True)}
        reclaimed = live = False
        for stage in sorted(stages):
            record = records.get(stage)
            if record is None:  # a stage without its record is invisible for good: its claims name what remains
                held = [c for c in claims if get_s(c, "wb") == stage]
                self.staging.discard(ws, stage, [get_n(c, "memory_id") for c in held],
                                     [get_s(c, "sk") or "" for c in held], set())
                reclaimed = True
            elif self.settle(ws, record):
                reclaimed = True
            else:
                live = live or get_s(record, "status") == "pending"
        if live and not reclaimed:
            raise WriteInProgress("A write-back of the same memories is still being stored; retry after it commits")
        return reclaimed


def _stage_keys(record: dict[str, Any]) -> list[str]:
    """The claim keys a stage record lists (records staged before issue 18 list bare shared names)."""
    if "keys" in record:
        return [v["S"] for v in record["keys"]["L"]]
    return [SHARED_NAME + v["S"] for v in record.get("names", {}).get("L", [])]
