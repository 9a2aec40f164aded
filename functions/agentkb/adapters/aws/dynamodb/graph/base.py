"""The DynamoDB graph table as its read, match and write parts share it (item layout: store.py)."""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, get_strings, guarded, key, query_all, s
from agentkb.adapters.aws.errors import is_aws_failure, is_conditional_failure, store_failure
from agentkb.errors import Conflict
from agentkb.models.graph.records import RelationRecord

STORE = "graph"
TRANSACTION_LIMIT = 100  # TransactWriteItems actions per call
_TRANSACTION_BYTES = 3_500_000  # stay under the 4 MB aggregate size of a transaction
SEP = "\x1f"
_MASK = (1 << 64) - 1
Ops = dict[tuple[str, str], dict[str, Any]]  # (pk, sk) -> one TransactWriteItems action; a later op replaces


def descending_weight(weight: float) -> str:
    """16 hex digits whose string order is the float's descending order (exact: the IEEE bits, no rounding)."""
    bits = struct.unpack(">Q", struct.pack(">d", weight + 0.0))[0]
    bits = (~bits & _MASK) if bits >> 63 else bits | (1 << 63)  # ascending-sortable
    return f"{~bits & _MASK:016x}"


def relation_from_item(item: dict[str, Any]) -> RelationRecord:
    return RelationRecord(id=get_s(item, "id") or "", from_id=get_s(item, "from_id") or "",
                          to_id=get_s(item, "to_id") or "", kind=get_s(item, "kind") or "",
                          derivation=get_s(item, "derivation") or "", trust=get_s(item, "trust") or "",
                          confidence=get_s(item, "confidence") or "", weight=float(item["weight"]["N"]),
                          proof_ids=get_strings(item, "proof_ids"))


def identity_sk(kind: str, project: str, identity_key: str) -> str:
    return json.dumps([kind, project, identity_key], ensure_ascii=False, separators=(",", ":"))


def adjacency_keys(ws: str, item: dict[str, Any]) -> list[tuple[str, str]]:
    """The adjacency items of a stored relation: by weight (every relation), by rank (proven ones)."""
    rid, a, b = item["id"]["S"], item["from_id"]["S"], item["to_id"]["S"]
    ends = [a] if a == b else [a, b]
    out = [(f"GAW#{ws}#{e}", f"{descending_weight(float(item['weight']['N']))}#{rid}") for e in ends]
    if get_n(item, "proven"):
        out += [(f"GAR#{ws}#{e}", f"{get_n(item, 'rank'):02d}#{rid}") for e in ends]
    return out


class DynamoDbGraphTable(DynamoDbTable):
    """Consistent batch reads, paged queries and chunked transactions over the graph table."""

    store = STORE

    def get_many(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """Consistent BatchGetItem by (pk, sk), pages of 100, UnprocessedKeys retried."""
        wanted = list(dict.fromkeys(keys))
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(wanted), 100):
            pending: dict[str, Any] = {self.table: {"Keys": [key(p, k) for p, k in wanted[start:start + 100]],
                                                    "ConsistentRead": True}}
            for attempt in range(8):
                page = guarded(STORE, partial(self.client.batch_get_item, RequestItems=pending))
                for item in page.get("Responses", {}).get(self.table, []):
                    found[(item["pk"]["S"], item["sk"]["S"])] = item
                pending = page.get("UnprocessedKeys") or {}
                if not pending:
                    break
                time.sleep(0.05 * (2 ** attempt))
            if pending:
                raise store_failure(RuntimeError("unprocessed keys"), store=STORE)
        return found

    def partition(self, pk: str, condition: str = "", values: dict[str, Any] | None = None,
                  limit: int | None = None, projection: str | None = None) -> list[dict[str, Any]]:
        """The items of partition `pk` (consistent), those matching a sort key `condition` when given, at most
        `limit` (applied by DynamoDB)."""
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk" + (f" AND {condition}" if condition else ""),
                                  "ExpressionAttributeValues": {":pk": s(pk), **(values or {})}}
        if projection:
            kwargs["ProjectionExpression"] = projection
        if limit is None:
            return list(query_all(self.client, STORE, **kwargs))
        items: list[dict[str, Any]] = []  # the cap is applied by DynamoDB (Limit), pages only past 1 MB
        while len(items) < limit:
            kwargs["Limit"] = limit - len(items)
            page = guarded(STORE, partial(self.client.query, **kwargs))
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return items

    def write(self, groups: Sequence[dict[tuple[str, str], dict[str, Any]]]) -> None:
        """Write the ops in order, in transactions of <= 100 actions (atomic only when they fit in one)."""
        batch: list[dict[str, Any]] = []
        size = 0
        chunks: list[list[dict[str, Any]]] = []
        for group in groups:
            for op in group.values():
                op_size = len(json.dumps(op))
                if batch and (len(batch) == TRANSACTION_LIMIT or size + op_size > _TRANSACTION_BYTES):
                    chunks.append(batch)
                    batch, size = [], 0
                batch.append(op)
                size += op_size
        if batch:
            chunks.append(batch)
        for chunk in chunks:
            try:
                self.client.transact_write_items(TransactItems=chunk)
            except Exception as exc:
                if is_conditional_failure(exc) and "ConditionalCheckFailed" in str(exc):
                    raise Conflict("An entity with the same kind and identity key already exists") from exc
                if is_aws_failure(exc):
                    raise store_failure(exc, store=STORE) from exc
                raise

    def put_op(self, item: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"Put": {"TableName": self.table, "Item": item, **extra}}

    def delete_op(self, pk: str, sk: str) -> dict[str, Any]:
        return {"Delete": {"TableName": self.table, "Key": key(pk, sk)}}
