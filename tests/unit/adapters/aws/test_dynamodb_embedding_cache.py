"""The DynamoDB embedding cache's reclamation (dynamodb_embedding_cache.py): every entry expires TTL_S after its last
use (the catalog table's TTL deletes it), a hit re-stamps an entry only when its stamp is older than REFRESH_S, and
`sweep` gives entries written before TTLs their expiry. Hits and misses stay correct throughout."""

from __future__ import annotations

from collections import Counter
from typing import Any

from agentkb.adapters.aws.dynamodb.embedding_cache import REFRESH_S, TTL_S, DynamoDbEmbeddingCache
from agentkb.adapters.aws.dynamodb.tables import aws_client, key
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv

NOW = 1_760_000_000.0
PROFILE = "titan@3"


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def setup(aws: AwsEnv) -> tuple[Any, DynamoDbEmbeddingCache, Clock, Counter[str]]:
    client = aws_client("dynamodb", REGION)
    calls: Counter[str] = Counter()
    client.meta.events.register("before-call.dynamodb.*", lambda model, **_: calls.update([model.name]))
    clock = Clock()
    return client, DynamoDbEmbeddingCache(lambda: client, aws.tables["catalog"], clock), clock, calls


def expiry(client: Any, table: str, content_hash: str) -> int | None:
    item = client.get_item(TableName=table, Key=key(f"EMB#{PROFILE}", content_hash))["Item"]
    return int(item["ttl"]["N"]) if "ttl" in item else None


def test_entries_expire_after_their_last_use_and_hits_refresh_rarely(aws: AwsEnv) -> None:
    client, cache, clock, calls = setup(aws)
    table = aws.tables["catalog"]
    cache.put_many(PROFILE, {"h1": [0.5, -0.25, 1.0]})
    assert expiry(client, table, "h1") == int(NOW) + TTL_S
    # A hit soon after writes nothing
    clock.now = NOW + REFRESH_S - 60
    calls.clear()
    assert cache.get_many(PROFILE, ["h1", "missing"]) == {"h1": [0.5, -0.25, 1.0]}
    assert calls["BatchWriteItem"] == 0 and expiry(client, table, "h1") == int(NOW) + TTL_S
    # A hit after REFRESH_S re-stamps the entry from now, with the same vector
    clock.now = NOW + REFRESH_S + 60
    calls.clear()
    assert cache.get_many(PROFILE, ["h1"]) == {"h1": [0.5, -0.25, 1.0]}
    assert calls["BatchWriteItem"] == 1 and expiry(client, table, "h1") == int(clock.now) + TTL_S


def test_the_sweep_gives_old_entries_an_expiry_once(aws: AwsEnv) -> None:
    client, cache, _, _ = setup(aws)
    table = aws.tables["catalog"]
    # Given entries written before TTLs (no `ttl`), and other catalog items that must stay untouched
    for h in ("old1", "old2"):
        client.put_item(TableName=table, Item={**key(f"EMB#{PROFILE}", h), "vector": {"B": b"\0" * 12}})
    client.put_item(TableName=table, Item={**key("KB#ws1", "kb-1"), "name": {"S": "runbooks"}})
    cache.put_many(PROFILE, {"new": [1.0, 0.0, 0.0]})
    # When swept, each old entry gets one; the next sweep finds none left
    done = cache.sweep(NOW)
    assert (done.examined, done.stamped, done.removed) == (2, 2, 0)
    assert expiry(client, table, "old1") == expiry(client, table, "old2") == int(NOW) + TTL_S
    assert "ttl" not in client.get_item(TableName=table, Key=key("KB#ws1", "kb-1"))["Item"]
    assert cache.sweep(NOW).stamped == 0
    # And the entries still answer
    assert set(cache.get_many(PROFILE, ["old1", "old2", "new"])) == {"old1", "old2", "new"}


def test_the_cli_sweeps_the_configured_cache(aws_settings: AwsEnv, capsys: Any) -> None:
    import json

    from agentkb.cli.main import main

    client = aws_client("dynamodb", REGION)
    client.put_item(TableName=aws_settings.tables["catalog"],
                    Item={**key(f"EMB#{PROFILE}", "legacy"), "vector": {"B": b"\0" * 12}})
    assert main(["kb", "sweep-cache", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"examined": 1, "removed": 0, "stamped": 1}
    assert expiry(client, aws_settings.tables["catalog"], "legacy") is not None
