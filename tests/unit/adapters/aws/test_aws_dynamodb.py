"""DynamoDB adapters on moto: catalog, key store, rate limiter, embedding cache, snapshots; the secrets adapter."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import pytest

from agentkb.adapters.aws.dynamodb.catalog import DynamoDbCatalog
from agentkb.adapters.aws.dynamodb.embedding_cache import DynamoDbEmbeddingCache
from agentkb.adapters.aws.dynamodb.security import DynamoDbKeyStore, DynamoDbRateLimiter
from agentkb.adapters.aws.dynamodb.snapshot import INLINE_LIMIT, DynamoDbSnapshotStore
from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.adapters.aws.secrets_manager import AwsSecretStore
from agentkb.errors import Conflict
from agentkb.models.domain import Document, EmbeddingProfile, KnowledgeBase, TagDefinition
from agentkb.models.snapshot import StoredSnapshot
from agentkb.services.access.api_keys import authenticate, create_api_key
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv

KB = KnowledgeBase("kb-1", "ws1", "Runbooks", "ops docs", EmbeddingProfile("amazon.titan-embed-text-v2:0", 256),
                   (TagDefinition("team", "text", "text1"),), "2024-01-01T00:00:00Z")
DOC = Document("doc-1", "kb-1", "ws1", "guide.md", None, "h1", {"team": "Platform"}, 2, 40, "2024-01-02T00:00:00Z")


def _ddb() -> object:
    return aws_client("dynamodb", REGION)


def test_catalog_round_trips_knowledge_bases_and_enforces_unique_names(aws: AwsEnv) -> None:
    catalog = DynamoDbCatalog(_ddb, aws.tables["catalog"])
    catalog.create_knowledge_base(KB)
    assert catalog.get_knowledge_base("ws1", "kb-1") == KB
    assert catalog.get_knowledge_base("ws2", "kb-1") is None  # another workspace never sees it
    assert catalog.find_knowledge_base_by_name("ws1", "Runbooks") == KB
    with pytest.raises(Conflict):
        catalog.create_knowledge_base(replace(KB, id="kb-2"))
    catalog.create_knowledge_base(replace(KB, id="kb-0", name="Archive", description=None, tag_definitions=()))
    assert [kb.name for kb in catalog.list_knowledge_bases("ws1")] == ["Archive", "Runbooks"]
    assert catalog.workspace_search_mode("ws1") is None
    catalog.set_workspace_search_mode("ws1", "vector")
    assert catalog.workspace_search_mode("ws1") == "vector"


def test_document_registry_commits_and_bumps_the_index_version(aws: AwsEnv) -> None:
    catalog = DynamoDbCatalog(_ddb, aws.tables["catalog"])
    catalog.create_knowledge_base(KB)
    assert catalog.index_version("kb-1") == 0
    catalog.claim_revision(DOC, 0)
    assert catalog.put_document(DOC)
    assert catalog.get_document("kb-1", "doc-1") == DOC
    assert catalog.find_document_by_name("kb-1", "guide.md") == DOC
    catalog.claim_revision(replace(DOC, revision=2), 1)
    assert catalog.put_document(replace(DOC, revision=2, content_hash="h2"))
    assert catalog.find_document_by_name("kb-1", "guide.md").revision == 2  # type: ignore[union-attr]
    catalog.delete_document("kb-1", "doc-1")
    assert catalog.get_document("kb-1", "doc-1") is None
    assert catalog.find_document_by_name("kb-1", "guide.md") is None
    assert catalog.index_version("kb-1") == 3
    assert catalog.index_version("kb-unknown") is None


def test_keys_store_only_hashes_and_authenticate_with_the_secret_pepper(aws: AwsEnv) -> None:
    keys = DynamoDbKeyStore(_ddb, aws.tables["keys"])
    secrets = AwsSecretStore(aws.secret_arn)
    plain, record = create_api_key(keys, secrets, ["ws1"], ["api:read"], "alice")
    raw = aws.client("dynamodb").scan(TableName=aws.tables["keys"])["Items"]
    assert plain not in str(raw) and record.key_hash in str(raw)
    principal = authenticate(keys, secrets, plain)
    assert (principal.id, principal.workspaces, principal.scopes) == ("alice", ("ws1",), ("api:read",))
    assert keys.get_key("missing") is None
    keys.put_key(replace(record, key_id="revoked1", revoked=True))
    assert keys.get_key("revoked1").revoked is True  # type: ignore[union-attr]


def test_rate_limiter_counts_per_key_per_minute_and_stops_at_the_limit(aws: AwsEnv) -> None:
    limiter = DynamoDbRateLimiter(_ddb, aws.tables["rate_limit"])
    now = 1_700_000_000.0
    decisions = [limiter.hit("k1", 3, now + i) for i in range(5)]
    assert [d.allowed for d in decisions] == [True, True, True, False, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0, 0]
    window_start = int(now) // 60 * 60
    assert decisions[3].reset_epoch == window_start + 60 and decisions[3].retry_after_s >= 1
    assert limiter.hit("k2", 3, now).allowed  # keys are independent
    assert limiter.hit("k1", 3, now + 60).allowed  # a new window starts fresh
    item = aws.client("dynamodb").get_item(TableName=aws.tables["rate_limit"],
                                           Key={"pk": {"S": "RL#k1"}, "sk": {"S": str(window_start)}})["Item"]
    assert item["count"]["N"] == "3" and int(item["ttl"]["N"]) > window_start + 60  # never counts past the limit


def test_embedding_cache_round_trips_float32_vectors(aws: AwsEnv) -> None:
    cache = DynamoDbEmbeddingCache(_ddb, aws.tables["catalog"])
    vectors = {f"h{i}": [i / 7, -0.5, 0.25] for i in range(130)}  # > one BatchGetItem page
    cache.put_many("titan@3", vectors)
    got = cache.get_many("titan@3", [*vectors, "missing"])
    assert set(got) == set(vectors)
    assert all(abs(a - b) < 1e-6 for h in vectors for a, b in zip(got[h], vectors[h], strict=True))
    assert cache.get_many("other@3", ["h1"]) == {}


def test_snapshots_inline_and_in_s3_first_writer_wins(aws: AwsEnv) -> None:
    catalog = DynamoDbCatalog(_ddb, aws.tables["catalog"])
    store = DynamoDbSnapshotStore(_ddb, aws.tables["snapshot"], partial(aws_client, "s3", REGION), aws.bucket,
                                  catalog)
    small = StoredSnapshot("s1", "ws1", "run", "a1", "rh", b'{"x":1}', "2024-01-01T00:00:00Z")
    assert store.put_if_absent(small) == small
    assert store.put_if_absent(replace(small, body=b'{"x":2}')).body == b'{"x":1}'  # the earlier one stays
    big = StoredSnapshot("s2", "ws1", "run", "a2", "rh", b"[" + b"1," * INLINE_LIMIT + b"1]", "2024-01-01T00:00:00Z")
    store.put_if_absent(big)
    assert store.get("s2") == big
    objects = aws.client("s3").list_objects_v2(Bucket=aws.bucket, Prefix="snapshots/ws1/s2/")["Contents"]
    assert len(objects) == 1
    assert store.get("missing") is None
    catalog.create_knowledge_base(KB)
    assert store.index_version("kb-1") == 0


def test_secret_pepper_comes_from_secrets_manager(aws: AwsEnv) -> None:
    assert AwsSecretStore(aws.secret_arn).key_pepper() == ("pepper-" + "x" * 57).encode()


def test_store_throttling_is_a_503_with_retry_after() -> None:
    from botocore.exceptions import ClientError

    from agentkb.adapters.aws.dynamodb.security import DynamoDbRateLimiter as Limiter
    from agentkb.errors import ServiceUnavailable

    class Throttled:
        def update_item(self, **_: object) -> None:
            raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException"}}, "UpdateItem")

    with pytest.raises(ServiceUnavailable) as caught:
        Limiter(lambda: Throttled(), "t").hit("k", 10, 0.0)
    assert caught.value.headers["Retry-After"] == "5"

