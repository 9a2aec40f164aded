"""RecallTraceStore on the memory table (no table of its own: the write path already owns this table's grants).

Items:
  RT#<request_id>   #TRACE                    workspace_id, trace (JSON), ttl
  MU#<ws>           <request_id>#<memory id>  memory_id, used (0/1), at, ttl: one usage event per (recall, memory)
Both expire after RETENTION_S (DynamoDB TTL on `ttl`); usage feedback decays to nothing long before that. A usage
report is one TransactWriteItems: the updated trace and its events together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, key, n, query_all, s
from agentkb.adapters.aws.errors import store_failure
from agentkb.models.recall.trace import RecallTrace, UsageEvent, apply_usage, decode_trace, encode_trace

STORE = "memory"
RETENTION_S = 180 * 86_400


class DynamoDbRecallTraceStore(DynamoDbTable):
    """RecallTraceStore port on the memory table."""

    store = STORE

    def _trace_item(self, trace: RecallTrace) -> dict[str, Any]:
        return {**key(f"RT#{trace.request_id}", "#TRACE"), "workspace_id": s(trace.workspace_id),
                "trace": s(encode_trace(trace)), "ttl": n(int(trace.created_at) + RETENTION_S)}

    def put(self, trace: RecallTrace) -> None:
        try:
            self.client.put_item(TableName=self.table, Item=self._trace_item(trace),
                                 ConditionExpression="attribute_not_exists(pk)")
        except Exception as exc:
            raise store_failure(exc, store=STORE) from exc

    def get(self, request_id: str) -> RecallTrace | None:
        item = self.get_item(f"RT#{request_id}", "#TRACE")
        return decode_trace(get_s(item, "trace") or "{}") if item else None

    def record_usage(self, request_id: str, used: Sequence[int], ignored: Mapping[int, str | None],
                     at: float) -> RecallTrace | None:
        current = self.get(request_id)
        if current is None:
            return None
        trace, events = apply_usage(current, used, ignored, at)
        ttl = n(int(at) + RETENTION_S)
        actions: list[dict[str, Any]] = [{"Put": {"TableName": self.table, "Item": self._trace_item(trace)}}]
        actions += [{"Put": {"TableName": self.table, "Item": {
            **key(f"MU#{trace.workspace_id}", f"{request_id}#{e.memory_id:012d}"), "memory_id": n(e.memory_id),
            "used": n(int(e.used)), "at": n(e.at), "ttl": ttl}}} for e in events]
        try:
            self.client.transact_write_items(TransactItems=actions)
        except Exception as exc:
            raise store_failure(exc, store=STORE) from exc
        return trace

    def usage_events(self, workspace_id: str, since: float, limit: int) -> list[UsageEvent]:
        items = query_all(self.client, STORE, TableName=self.table, ConsistentRead=True,
                          KeyConditionExpression="pk = :pk", FilterExpression="#at >= :since",
                          ExpressionAttributeNames={"#at": "at"},
                          ExpressionAttributeValues={":pk": s(f"MU#{workspace_id}"), ":since": n(since)})
        events = [UsageEvent(get_n(i, "memory_id"), bool(get_n(i, "used")), float(i["at"]["N"])) for i in items]
        return sorted(events, key=lambda e: (-e.at, e.memory_id))[:limit]
