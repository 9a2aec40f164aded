"""The embedding cache on DynamoDB: vectors by (profile, hash of the embedded text), kept while they are used.

  catalog table  EMB#<profile>  <vector key>  vector (float32 little-endian bytes), ttl (epoch s: last use + TTL_S)

An entry is keyed by what the model embedded (a chunk's context line and content), shared by every KB and workspace
of the profile; nothing points at it, since chunks keep their own vectors in the index. So reclamation goes by
last use: a write stamps `ttl` = now + TTL_S, a hit re-stamps an entry stamped more than REFRESH_S ago (the entry
put again in the read's own BatchWriteItem: at most once a month per entry, never on every read), and the catalog
table's TTL (infra/constants.py TABLES) deletes what nobody used for TTL_S - the vectors of deleted documents and
knowledge bases among them. Deleting on document delete would need a reference check per chunk in the OpenSearch
index; an expired entry costs at most one model call on a later ingest of the same text (a miss recomputes:
services/ingest.embed_chunks). Entries written before the TTL carry none: a hit stamps them, and
`agentkb kb sweep-cache` stamps the rest (one Scan of the `EMB#` items without `ttl`).
"""

from __future__ import annotations

import logging
import sys
import time
from array import array
from collections.abc import Callable, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.tables import batch_get, batch_write, get_n, get_s, guarded, key, n
from agentkb.ports.embedding import CacheSweep

STORE = "embedding_cache"
TTL_S = 90 * 86_400
REFRESH_S = 30 * 86_400
log = logging.getLogger("agentkb.embedding_cache")


def _pack(vector: Sequence[float]) -> bytes:
    packed = array("f", vector)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def _unpack(raw: bytes) -> list[float]:
    values = array("f")
    values.frombytes(raw)
    if sys.byteorder != "little":
        values.byteswap()
    return values.tolist()


class DynamoDbEmbeddingCache:
    """Vectors by (profile, content hash): unchanged chunks are never sent to Bedrock twice."""

    def __init__(self, client: Callable[[], Any], table: str, clock: Callable[[], float] = time.time) -> None:
        self._client = client
        self.table = table
        self._clock = clock

    def get_many(self, profile_key: str, content_hashes: Sequence[str]) -> dict[str, list[float]]:
        keys = [key(f"EMB#{profile_key}", h) for h in dict.fromkeys(content_hashes)]
        items = batch_get(self._client(), STORE, self.table, keys) if keys else []
        now = int(self._clock())
        stale = [i for i in items if "ttl" not in i or get_n(i, "ttl") < now + TTL_S - REFRESH_S]
        if stale:
            try:
                self._stamp(stale, now)
            except Exception:  # only means an earlier expiry: the read's answer stands
                log.warning("embedding cache expiry refresh failed", extra={"entries": len(stale)})
        return {get_s(i, "sk") or "": _unpack(i["vector"]["B"]) for i in items}

    def put_many(self, profile_key: str, vectors: dict[str, list[float]]) -> None:
        expires = n(int(self._clock()) + TTL_S)
        requests = [{"PutRequest": {"Item": {**key(f"EMB#{profile_key}", h), "vector": {"B": _pack(v)},
                                             "ttl": expires}}} for h, v in vectors.items()]
        batch_write(self._client(), STORE, self.table, requests)

    def _stamp(self, items: list[dict[str, Any]], now: int) -> None:
        """Put these entries again with a fresh expiry (the same content-addressed vector: racing puts agree)."""
        fresh = [{"PutRequest": {"Item": {"pk": i["pk"], "sk": i["sk"], "vector": i["vector"], "ttl": n(now + TTL_S)}}}
                 for i in items]
        batch_write(self._client(), STORE, self.table, fresh)

    def sweep(self, now: float) -> CacheSweep:
        """Give every entry without an expiry (written before TTLs) one, from now: unused, it expires in TTL_S."""
        kwargs: dict[str, Any] = {
            "TableName": self.table, "FilterExpression": "begins_with(pk, :emb) AND attribute_not_exists(#ttl)",
            "ExpressionAttributeNames": {"#ttl": "ttl"}, "ExpressionAttributeValues": {":emb": {"S": "EMB#"}}}
        stamped = 0
        while True:
            page = guarded(STORE, lambda: self._client().scan(**kwargs))
            items = page.get("Items", [])
            if items:
                self._stamp(items, int(now))
                stamped += len(items)
            if "LastEvaluatedKey" not in page:
                return CacheSweep(examined=stamped, stamped=stamped)
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
