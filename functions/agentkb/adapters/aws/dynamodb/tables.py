"""Shared plumbing of the DynamoDB adapters: lazily built clients, attribute encoding, batched reads and writes.

Every table has string keys `pk` / `sk` (infra/constants.py TABLES); items are encoded by hand (S, N, B, BOOL,
L of S) so that no boto3 resource model is loaded on the cold path.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache, partial
from typing import Any

from agentkb.adapters.aws.errors import is_aws_failure, is_conditional_failure, store_failure
from agentkb.errors import Conflict

_lock = threading.Lock()
ClientFactory = Callable[[], Any]  # returns the process's boto3 client of one service (built on the first call)


@cache
def aws_client(service: str, region: str | None, read_timeout_s: float = 10.0, max_attempts: int = 3) -> Any:
    """One boto3 client per (service, region, timeout), created on first use (never at import)."""
    with _lock:
        from botocore.config import Config

        config = Config(read_timeout=read_timeout_s, connect_timeout=3,
                        retries={"max_attempts": max_attempts, "mode": "standard"})
        return _session().client(service, region_name=region, config=config)


def aws_credentials() -> Any:
    """The credentials every client signs with (the Lambda role's, refreshed by botocore)."""
    with _lock:
        return _session().get_credentials()


@cache
def _session() -> Any:
    """The process's one boto3 session: its clients share the loaded endpoint data and resolved credentials (a
    session per client made a cold request's four clients take twice as long to create)."""
    import boto3

    return boto3.session.Session()


def guarded(store: str, call: Callable[[], Any]) -> Any:
    """Run one AWS call, mapping its failure through aws_errors (the one mapping place)."""
    try:
        return call()
    except Exception as exc:
        if is_aws_failure(exc):
            raise store_failure(exc, store=store) from exc
        raise


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int | float) -> dict[str, str]:
    return {"N": repr(value) if isinstance(value, float) else str(value)}


def key(pk: str, sk: str) -> dict[str, dict[str, str]]:
    return {"pk": s(pk), "sk": s(sk)}


def strings(values: Sequence[str]) -> dict[str, Any]:
    return {"L": [s(v) for v in values]}


def get_s(item: dict[str, Any], name: str) -> str | None:
    value = item.get(name)
    return value.get("S") if value else None


def get_n(item: dict[str, Any], name: str, default: int = 0) -> int:
    value = item.get(name)
    return int(value["N"]) if value and "N" in value else default


def get_strings(item: dict[str, Any], name: str) -> tuple[str, ...]:
    return tuple(v["S"] for v in (item.get(name) or {}).get("L", []))


def query_all(client: Any, store: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    """Every item of a Query, following LastEvaluatedKey."""
    while True:
        page = guarded(store, lambda: client.query(**kwargs))
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def batch_get(client: Any, store: str, table: str, keys: Sequence[dict[str, Any]],
              attempts: int = 5, *, consistent: bool = False) -> list[dict[str, Any]]:
    """BatchGetItem in pages of 100, retrying UnprocessedKeys with backoff."""
    items: list[dict[str, Any]] = []
    for start in range(0, len(keys), 100):
        pending: dict[str, Any] = {table: {"Keys": list(keys[start:start + 100])}}
        if consistent:
            pending[table]["ConsistentRead"] = True
        for attempt in range(attempts):
            page = guarded(store, partial(client.batch_get_item, RequestItems=pending))
            items.extend(page.get("Responses", {}).get(table, []))
            pending = page.get("UnprocessedKeys") or {}
            if not pending:
                break
            time.sleep(0.05 * (2 ** attempt))
    return items


def batch_write(client: Any, store: str, table: str, requests: Sequence[dict[str, Any]], attempts: int = 5) -> None:
    """BatchWriteItem in pages of 25, retrying UnprocessedItems with backoff."""
    for start in range(0, len(requests), 25):
        pending: dict[str, Any] = {table: list(requests[start:start + 25])}
        for attempt in range(attempts):
            page = guarded(store, partial(client.batch_write_item, RequestItems=pending))
            pending = page.get("UnprocessedItems") or {}
            if not pending:
                break
            time.sleep(0.05 * (2 ** attempt))


class DynamoDbTable:
    """One table: its name, its boto3 client (from a factory, on first use, never at import) and the calls a store
    makes on it, each failure mapped under the store's name. A large store's parts share one (composition: the
    memory and graph stores); a small store extends it."""

    store = "table"  # the name aws_errors uses when it maps this store's failures

    def __init__(self, client: ClientFactory, table: str, *, store: str | None = None) -> None:
        self._client = client
        self.table = table
        if store is not None:
            self.store = store

    @property
    def client(self) -> Any:
        return self._client()

    def get_item(self, pk: str, sk: str) -> dict[str, Any] | None:
        """A consistent point read; None when the item does not exist."""
        item = guarded(self.store, lambda: self.client.get_item(TableName=self.table, Key=key(pk, sk),
                                                                ConsistentRead=True)).get("Item")
        return item or None

    def query(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every item of a Query on this table, following LastEvaluatedKey."""
        return query_all(self.client, self.store, TableName=self.table, **kwargs)

    def query_page(self, **kwargs: Any) -> dict[str, Any]:
        """One page of a Query on this table."""
        page: dict[str, Any] = guarded(self.store, lambda: self.client.query(TableName=self.table, **kwargs))
        return page

    def scan_page(self, **kwargs: Any) -> dict[str, Any]:
        """One page of a Scan of this table."""
        page: dict[str, Any] = guarded(self.store, lambda: self.client.scan(TableName=self.table, **kwargs))
        return page

    def update(self, **kwargs: Any) -> dict[str, Any]:
        """One UpdateItem on this table."""
        out: dict[str, Any] = guarded(self.store, lambda: self.client.update_item(TableName=self.table, **kwargs))
        return out

    def batch_get(self, keys: Sequence[dict[str, Any]], *, consistent: bool = False) -> list[dict[str, Any]]:
        return batch_get(self.client, self.store, self.table, keys, consistent=consistent)

    def batch_write(self, requests: Sequence[dict[str, Any]]) -> None:
        batch_write(self.client, self.store, self.table, requests)

    def transact(self, actions: list[dict[str, Any]], *, conflict: str) -> None:
        """One TransactWriteItems: a failed condition is a Conflict saying `conflict`, anything else a store
        failure."""
        try:
            self.client.transact_write_items(TransactItems=actions)
        except Exception as exc:
            if is_conditional_failure(exc):
                raise Conflict(conflict) from exc
            raise store_failure(exc, store=self.store) from exc

    def conditional(self, call: Callable[[], Any]) -> bool:
        """Run one conditional write: False when its condition failed, a store failure for anything else."""
        try:
            call()
        except Exception as exc:
            if is_conditional_failure(exc):
                return False
            raise store_failure(exc, store=self.store) from exc
        return True
