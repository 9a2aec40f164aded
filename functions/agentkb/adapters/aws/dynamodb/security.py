"""Key store (hashes only) and rate limiter on DynamoDB (the embedding cache: dynamodb_embedding_cache.py).

  keys table        KEY#<key_id>      #KEY           key_hash, principal, workspaces, scopes, created_at, revoked
  rate_limit table  RL#<key_id>       <window start> count, ttl (expired windows are removed by DynamoDB TTL)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkb.adapters.aws.dynamodb.tables import get_s, get_strings, guarded, key, n, s, strings
from agentkb.adapters.aws.errors import is_conditional_failure, store_failure
from agentkb.errors import Conflict
from agentkb.models.domain import ApiKeyRecord, RateDecision

WINDOW_S = 60
TTL_GRACE_S = 120


class DynamoDbKeyStore:
    def __init__(self, client: Callable[[], Any], table: str) -> None:
        self._client = client
        self.table = table

    def put_key(self, record: ApiKeyRecord) -> None:
        item = {**key(f"KEY#{record.key_id}", "#KEY"), "key_hash": s(record.key_hash),
                "principal": s(record.principal), "workspaces": strings(record.workspaces),
                "scopes": strings(record.scopes), "created_at": s(record.created_at),
                "revoked": {"BOOL": record.revoked}}
        try:
            self._client().put_item(TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)")
        except Exception as exc:  # an existing key id is never overwritten: Conflict, as on SQLite
            if is_conditional_failure(exc):
                raise Conflict("An API key with this id already exists") from exc
            raise store_failure(exc, store="keys") from exc

    def get_key(self, key_id: str) -> ApiKeyRecord | None:
        # A consistent read: a key revoked a moment ago must answer 401 now, not after replication catches up.
        item = guarded("keys", lambda: self._client().get_item(
            TableName=self.table, Key=key(f"KEY#{key_id}", "#KEY"), ConsistentRead=True)).get("Item")
        return _key(key_id, item) if item else None

    def list_keys(self) -> list[ApiKeyRecord]:
        """A scan: the keys table holds nothing but keys, and operators list them rarely."""
        records: list[ApiKeyRecord] = []
        kwargs: dict[str, Any] = {"TableName": self.table}
        while True:
            page = guarded("keys", lambda: self._client().scan(**kwargs))
            records.extend(_key(i["pk"]["S"].removeprefix("KEY#"), i) for i in page.get("Items", [])
                           if i.get("sk", {}).get("S") == "#KEY")
            if "LastEvaluatedKey" not in page:
                return sorted(records, key=lambda r: (r.created_at, r.key_id))
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def revoke_key(self, key_id: str) -> bool:
        """Conditional on the key existing; every later authentication reads the item, so it answers 401 at once."""
        try:
            self._client().update_item(TableName=self.table, Key=key(f"KEY#{key_id}", "#KEY"),
                                       UpdateExpression="SET revoked = :t", ConditionExpression="attribute_exists(pk)",
                                       ExpressionAttributeValues={":t": {"BOOL": True}})
        except Exception as exc:
            if is_conditional_failure(exc):
                return False
            raise store_failure(exc, store="keys") from exc
        return True

    def delete_key(self, key_id: str) -> bool:
        """The key's item gone (forget a principal); False when there was none."""
        try:
            self._client().delete_item(TableName=self.table, Key=key(f"KEY#{key_id}", "#KEY"),
                                       ConditionExpression="attribute_exists(pk)")
        except Exception as exc:
            if is_conditional_failure(exc):
                return False
            raise store_failure(exc, store="keys") from exc
        return True


def _key(key_id: str, item: dict[str, Any]) -> ApiKeyRecord:
    return ApiKeyRecord(key_id, get_s(item, "key_hash") or "", get_s(item, "principal") or key_id,
                        get_strings(item, "workspaces"), get_strings(item, "scopes"),
                        get_s(item, "created_at") or "", bool(item.get("revoked", {}).get("BOOL", False)))


class DynamoDbRateLimiter:
    """Fixed one-minute windows: one conditional UpdateItem per request, shared by every Lambda instance.

    The condition stops counting at the limit, so a flood cannot grow the counter; a refused update is the
    "over the limit" answer (no second read).
    """

    def __init__(self, client: Callable[[], Any], table: str) -> None:
        self._client = client
        self.table = table

    def hit(self, key_id: str, limit: int, now: float) -> RateDecision:
        window = int(now) // WINDOW_S * WINDOW_S
        reset = window + WINDOW_S
        try:
            result = self._client().update_item(
                TableName=self.table, Key=key(f"RL#{key_id}", str(window)),
                UpdateExpression="SET #ttl = :ttl ADD #count :one",
                ConditionExpression="attribute_not_exists(#count) OR #count < :limit",
                ExpressionAttributeNames={"#count": "count", "#ttl": "ttl"},
                ExpressionAttributeValues={":one": n(1), ":limit": n(limit), ":ttl": n(reset + TTL_GRACE_S)},
                ReturnValues="UPDATED_NEW")
        except Exception as exc:
            if is_conditional_failure(exc):
                return RateDecision(limit, 0, reset, False, max(1, reset - int(now)))
            raise store_failure(exc, store="rate_limit") from exc
        count = int(result["Attributes"]["count"]["N"])
        return RateDecision(limit, max(0, limit - count), reset, True, 0)
