"""AWS WorkspaceArchive (ports/archive.py): memory revisions, recall traces and snapshot ids of a workspace on the
memory and snapshot tables (item layouts: memory/store.py, traces.py, snapshot.py); chunks come from the OpenSearch
index (opensearch/archive_chunks.py).

Memory revisions are written under their own ids with every item a revision has (record, vector, entity links,
live-name claim, idempotency keys, the unindexed marker when an index is attached); the `M#` record goes last, so a
revision whose record is stored is complete, and an import killed halfway writes the rest on its next run. The
global id counter is raised past the highest imported id. Traces and snapshots are listed with a paged Scan
(neither table is keyed by workspace): an operator's export reads those tables once.

An import that gives the records new ids (services/portability/rename.py) keeps its decision and its memory id map
in the memory table under `MI#["<target ws>","<source ws>"]` (memory/store.py's key layout): `#REMAP` (remap 0/1)
and `M#<old id>` (new_id), each written once (attribute_not_exists); new ids come from the global counter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import fields
from functools import partial
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.items import detail, meta_update, mid, revision_items
from agentkb.adapters.aws.dynamodb.memory.markers import unindexed_marker
from agentkb.adapters.aws.dynamodb.memory.match import unpack
from agentkb.adapters.aws.dynamodb.memory.revisions import allocate_ids, idempotency_sk
from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n, s
from agentkb.adapters.aws.dynamodb.traces import RETENTION_S, DynamoDbRecallTraceStore
from agentkb.adapters.aws.errors import is_conditional_failure, store_failure
from agentkb.models.domain import Chunk, KnowledgeBase
from agentkb.models.memory.api import IdempotencyRecord, MemoryRecord
from agentkb.models.memory.detail import MemoryFields
from agentkb.models.recall.trace import RecallTrace, decode_trace
from agentkb.ports.archive import ArchivedMemory, ArchivedTrace

_SEQ = key("MSEQ", "#SEQ")
_TOP = "M#" + "9" * 12


class AwsWorkspaceArchive:
    """WorkspaceArchive port on the memory and snapshot tables plus the OpenSearch chunk reader."""

    def __init__(self, memory: DynamoDbTable, snapshots: DynamoDbTable, chunks: Any,
                 synced: Callable[[str, Sequence[int]], object] | None = None) -> None:
        self.memory, self.snapshots, self.chunks = memory, snapshots, chunks
        self.synced = synced  # the OpenSearch memory index's sync, when one is attached

    def document_chunks(self, kb: KnowledgeBase, document_ids: Sequence[str]) -> dict[str, list[Chunk]]:
        result: dict[str, list[Chunk]] = self.chunks.document_chunks(kb, document_ids)
        return result

    # -- memories -----------------------------------------------------------------------------------------
    def memories(self, workspace_id: str, after_id: int, limit: int) -> list[ArchivedMemory]:
        ws, items = f"MW#{workspace_id}", list[dict[str, Any]]()
        while not items:  # a page of nothing but unpublished write-back items is skipped, not an end
            page = self.memory.query_page(
                ConsistentRead=True, Limit=limit, KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
                ExpressionAttributeValues={":pk": s(ws), ":lo": s("M#" + mid(after_id + 1)), ":hi": s(_TOP)})
            raw = page.get("Items", [])
            if not raw:
                return []
            items = [i for i in raw if "wb" not in i or self._committed(ws, i)]
            after_id = get_n(raw[-1], "memory_id")
        ids = [get_n(i, "memory_id") for i in items]
        vectors = {get_n(v, "memory_id"): list(unpack(bytes(v["embedding"]["B"]))) for v in self.memory.batch_get(
            [key(ws, "V#" + mid(i)) for i in ids], consistent=True)}
        keys = self._idempotency(ws, set(ids))
        return [ArchivedMemory(detail(i), get_s(i, "request_hash") or "", vectors.get(get_n(i, "memory_id"), []),
                               tuple(keys.get(get_n(i, "memory_id"), ()))) for i in items]

    def _committed(self, ws: str, item: dict[str, Any]) -> bool:
        stage = self.memory.get_item(ws, f"WB#{get_s(item, 'wb')}")
        return stage is not None and get_s(stage, "status") == "committed"

    def _idempotency(self, ws: str, ids: set[int]) -> dict[int, list[IdempotencyRecord]]:
        out: dict[int, list[IdempotencyRecord]] = {}
        for item in self.memory.query(ConsistentRead=True, KeyConditionExpression="pk = :pk AND begins_with(sk, :i)",
                                      ExpressionAttributeValues={":pk": s(ws), ":i": s("I#[")}):
            memory_id = get_n(item, "memory_id")
            if memory_id in ids:
                principal, idem_key = json.loads((get_s(item, "sk") or "I#[]")[2:])
                out.setdefault(memory_id, []).append(IdempotencyRecord(principal, idem_key,
                                                                       get_s(item, "body_hash") or ""))
        return {i: sorted(keys, key=lambda k: (k.principal, k.key)) for i, keys in out.items()}

    def put_memories(self, workspace_id: str, memories: Sequence[ArchivedMemory]) -> int:
        if not memories:
            return 0
        ws = f"MW#{workspace_id}"
        held = {get_n(i, "memory_id") for i in self.memory.batch_get(
            [key(ws, "M#" + mid(m.detail.memory_id)) for m in memories], consistent=True)}
        fresh = [m for m in memories if m.detail.memory_id not in held]
        if not fresh:
            return 0
        self._raise_counter(max(m.detail.memory_id for m in fresh))
        records, others = [], []
        for memory in fresh:
            record, rest = self._items(workspace_id, memory)
            records.append({"PutRequest": {"Item": record}})
            others += [{"PutRequest": {"Item": item}} for item in rest]
        self.memory.batch_write(others)
        self.memory.update(**meta_update(_record(workspace_id, fresh[0])))
        self.memory.batch_write(records)  # last: a stored record means a complete revision
        if self.synced is not None:
            self.synced(workspace_id, [m.detail.memory_id for m in fresh])
        return len(fresh)

    def _items(self, workspace_id: str, memory: ArchivedMemory) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        d, ws = memory.detail, f"MW#{workspace_id}"
        record, vector, links = revision_items(_record(workspace_id, memory), d.memory_id, d.revision, d.supersedes)
        rest = [vector, *links]
        if d.superseded:
            record["superseded"] = vector["superseded"] = n(1)
        else:
            rest.append({**key(ws, d.name_key), "memory_id": n(d.memory_id), "revision": n(d.revision)})
        rest += [{**key(ws, idempotency_sk(k.principal, k.key)), "body_hash": s(k.body_hash),
                  "memory_id": n(d.memory_id)} for k in memory.idempotency]
        if self.synced is not None:
            rest.append(unindexed_marker(workspace_id, d.memory_id))
        return record, rest

    def _raise_counter(self, highest: int) -> None:
        """The global id counter at `highest` at least: ids the store allocates later never meet imported ones."""
        try:
            self.memory.client.update_item(
                TableName=self.memory.table, Key=_SEQ, UpdateExpression="SET #next = :top",
                ConditionExpression="attribute_not_exists(#next) OR #next < :top",
                ExpressionAttributeNames={"#next": "next"}, ExpressionAttributeValues={":top": n(highest)})
        except Exception as exc:
            if not is_conditional_failure(exc):  # a failed condition: the counter is past it already
                raise store_failure(exc, store="memory") from exc

    # -- an import's new ids -----------------------------------------------------------------------------
    def remap_decision(self, source_workspace_id: str, workspace_id: str, remap: bool) -> bool:
        pk = _map_pk(source_workspace_id, workspace_id)
        self._put_new([{**key(pk, "#REMAP"), "remap": n(int(remap))}])
        return bool(get_n(self.memory.get_item(pk, "#REMAP") or {}, "remap", int(remap)))

    def memory_id_map(self, source_workspace_id: str, workspace_id: str,
                      memory_ids: Collection[int]) -> dict[int, int]:
        pk, wanted = _map_pk(source_workspace_id, workspace_id), sorted(set(memory_ids))
        found = self._mapped(pk, wanted)
        while missing := [old for old in wanted if old not in found]:  # again only when a concurrent run stored some
            first = allocate_ids(self.memory, len(missing))
            self._put_new([{**key(pk, "M#" + mid(old)), "old_id": n(old), "new_id": n(first + i)}
                           for i, old in enumerate(missing)])
            found = self._mapped(pk, wanted)
        return {old: found[old] for old in wanted}

    def _mapped(self, pk: str, ids: Sequence[int]) -> dict[int, int]:
        return {get_n(i, "old_id"): get_n(i, "new_id") for i in self.memory.batch_get(
            [key(pk, "M#" + mid(old)) for old in ids], consistent=True)}

    def _put_new(self, items: list[dict[str, Any]]) -> None:
        """Each item unless its key is stored already: transactions of 100, the first writer of a key wins."""
        for start in range(0, len(items), 100):
            actions = [{"Put": {"TableName": self.memory.table, "Item": item, "ConditionExpression":
                                "attribute_not_exists(pk)"}} for item in items[start:start + 100]]
            self.memory.conditional(partial(self.memory.client.transact_write_items, TransactItems=actions))

    # -- snapshots and traces -----------------------------------------------------------------------------
    def snapshot_ids(self, workspace_id: str) -> Iterator[str]:
        for item in _scan(self.snapshots, "workspace_id = :ws", {":ws": s(workspace_id)}, "snapshot_id"):
            yield get_s(item, "snapshot_id") or ""

    def traces(self, workspace_id: str) -> Iterator[ArchivedTrace]:
        """Each trace with its own usage events (one Query of `MU#<ws>` per trace, by its request id): memory stays
        flat however many events the workspace holds (it read the whole partition into memory before)."""
        for trace in self._stored_traces(workspace_id):
            yield ArchivedTrace(trace, tuple(sorted(
                (get_n(i, "memory_id"), bool(get_n(i, "used")), float(i["at"]["N"]))
                for i in self._usage_items(workspace_id, trace.request_id))))

    def _stored_traces(self, workspace_id: str) -> Iterator[RecallTrace]:
        for item in _scan(self.memory, "begins_with(pk, :rt) AND workspace_id = :ws",
                          {":rt": s("RT#"), ":ws": s(workspace_id)}, "pk, #trace"):
            yield decode_trace(get_s(item, "trace") or "{}")

    def _usage_items(self, workspace_id: str, request_id: str) -> Iterator[dict[str, Any]]:
        for item in self.memory.query(
                ConsistentRead=True, KeyConditionExpression="pk = :pk AND begins_with(sk, :rq)",
                ExpressionAttributeValues={":pk": s(f"MU#{workspace_id}"), ":rq": s(f"{request_id}#")}):
            if (get_s(item, "sk") or "").rsplit("#", 1)[0] == request_id:  # not another id this one begins
                yield item

    def put_traces(self, traces: Sequence[ArchivedTrace]) -> int:
        new = 0
        store = DynamoDbRecallTraceStore(lambda: self.memory.client, self.memory.table)
        for archived in traces:
            t = archived.trace
            if self.memory.get_item(f"RT#{t.request_id}", "#TRACE") is not None:
                continue
            self.memory.batch_write([{"PutRequest": {"Item": {
                **key(f"MU#{t.workspace_id}", f"{t.request_id}#{m:012d}"), "memory_id": n(m), "used": n(int(used)),
                "at": n(at), "ttl": n(int(at) + RETENTION_S)}}} for m, used, at in archived.usage])
            store.put(t)  # last: a stored trace has its usage
            new += 1
        return new

    # -- forget a principal -------------------------------------------------------------------------------
    def owned_memories(self, workspace_id: str, owner_id: str) -> list[int]:
        return [get_n(i, "memory_id") for i in self.memory.query(
            ConsistentRead=True, KeyConditionExpression="pk = :pk AND begins_with(sk, :m)",
            FilterExpression="#v = :personal AND owner_id = :owner", ProjectionExpression="memory_id",
            ExpressionAttributeNames={"#v": "visibility"}, ExpressionAttributeValues={
                ":pk": s(f"MW#{workspace_id}"), ":m": s("M#"), ":personal": s("personal"), ":owner": s(owner_id)})]

    def forget_principal(self, workspace_id: str, principal_id: str) -> dict[str, int]:
        traces = {t.request_id for t in self._stored_traces(workspace_id) if t.principal_id == principal_id}
        usage = [key(f"MU#{workspace_id}", get_s(i, "sk") or "") for r in sorted(traces)
                 for i in self._usage_items(workspace_id, r)]
        ws = f"MW#{workspace_id}"
        idempotency = [key(ws, get_s(i, "sk") or "") for i in self.memory.query(
            ConsistentRead=True, KeyConditionExpression="pk = :pk AND begins_with(sk, :i)", ProjectionExpression="sk",
            ExpressionAttributeValues={":pk": s(ws), ":i": s("I#[")})
            if json.loads((get_s(i, "sk") or "I#[]")[2:])[0] == principal_id]
        self.memory.batch_write([{"DeleteRequest": {"Key": k}} for k in
                                 [*usage, *idempotency, *(key(f"RT#{r}", "#TRACE") for r in sorted(traces))]])
        return {"traces": len(traces), "usage_events": len(usage), "idempotency_keys": len(idempotency)}


def _record(workspace_id: str, memory: ArchivedMemory) -> MemoryRecord:
    values = {f.name: getattr(memory.detail, f.name) for f in fields(MemoryFields)}
    return MemoryRecord(**{**values, "workspace_id": workspace_id}, request_hash=memory.request_hash,
                        embedding=memory.embedding)


def _map_pk(source_workspace_id: str, workspace_id: str) -> str:
    return "MI#" + json.dumps([workspace_id, source_workspace_id], ensure_ascii=False, separators=(",", ":"))


def _scan(table: DynamoDbTable, condition: str, values: dict[str, Any], projection: str) -> Iterator[dict[str, Any]]:
    kwargs: dict[str, Any] = {"ConsistentRead": True, "FilterExpression": condition,
                              "ExpressionAttributeValues": values, "ProjectionExpression": projection}
    if "#trace" in projection:
        kwargs["ExpressionAttributeNames"] = {"#trace": "trace"}
    while True:
        page = table.scan_page(**kwargs)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

