"""moto-backed AWS for the AWS adapters: the stack's tables (infra/constants.py TABLES), pepper secret, bucket and
ingest queue; a bare memory table; moto's transaction rollback copied once per table; and the two services moto
cannot serve (Bedrock, OpenSearch Serverless) routed to the doubles where the adapters build their clients.

moto's TransactWriteItems deep-copies the whole table once per item of the transaction (its rollback backup):
a 25-item graph write over a seeded graph table took ~2 s. `one_backup_per_table` keeps moto's rollback but
copies each table once per transaction.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import boto3
import moto.dynamodb.models as moto_dynamodb
from moto import mock_aws
from moto.dynamodb.models.table import Table

from agentkb.adapters.aws.dynamodb import tables as dynamodb_tables
from agentkb.adapters.aws.opensearch import transport as aws_http
from infra import constants as c
from testkit.environment import REGION
from testkit.fake_opensearch import FakeOpenSearch
from testkit.patches import Patcher


@dataclass
class AwsEnv:
    tables: dict[str, str]
    secret_arn: str
    bucket: str
    queue_url: str

    def client(self, service: str) -> Any:
        return boto3.client(service, region_name=REGION)


def provision(prefix: str) -> AwsEnv:
    """Inside mock_aws: the stack's resources, each named `<prefix>-<what>` (tables by their TABLES key)."""
    ddb = boto3.client("dynamodb", region_name=REGION)
    tables = {}
    for name, (pk, sk, _ttl) in c.TABLES.items():
        table = f"{prefix}-{name.replace('_', '-')}"
        keys = [{"AttributeName": pk, "KeyType": "HASH"}] + ([{"AttributeName": sk, "KeyType": "RANGE"}] if sk else [])
        ddb.create_table(TableName=table, KeySchema=keys, BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": k["AttributeName"], "AttributeType": "S"}
                                               for k in keys])
        tables[name] = table
    secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name=f"{prefix}-pepper", SecretString="pepper-" + "x" * 57)
    bucket = f"{prefix}-documents"
    boto3.client("s3", region_name=REGION).create_bucket(
        Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    queue_url = boto3.client("sqs", region_name=REGION).create_queue(QueueName=f"{prefix}-ingest")["QueueUrl"]
    return AwsEnv(tables, secret["ARN"], bucket, queue_url)


@contextmanager
def memory_table() -> Iterator[Any]:
    """A DynamoDB client (moto) with an empty `memory` table of the memory store's key schema."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name=REGION, aws_access_key_id="testing",
                              aws_secret_access_key="testing")
        client.create_table(TableName="memory", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}])
        yield client


class _TableCopies:
    """Stands in for moto's `copy` module: inside one transaction a table is deep-copied once, then reused."""

    def __init__(self) -> None:
        self.backups: dict[int, Any] | None = None

    def deepcopy(self, value: Any, memo: Any = None) -> Any:
        if self.backups is None or not isinstance(value, Table):
            return copy.deepcopy(value, memo)
        if id(value) not in self.backups:
            self.backups[id(value)] = copy.deepcopy(value)
        return self.backups[id(value)]

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def one_backup_per_table(patch: Patcher) -> None:
    """moto's transaction rollback copies each table once per transaction, for as long as `patch` lasts."""
    copies = _TableCopies()
    transact = moto_dynamodb.DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: Any) -> None:
        copies.backups = {}
        try:
            transact(self, transact_items)
        finally:
            copies.backups = None

    patch.setattr(moto_dynamodb, "copy", copies)
    patch.setattr(moto_dynamodb.DynamoDBBackend, "transact_write_items", transact_write_items)


def route_to_doubles(patch: Patcher, clients: dict[str, Any], opensearch: FakeOpenSearch) -> None:
    """The adapters' boto3 clients come from `clients` when it has the service (read at each call, so a caller
    may add one later), else from moto; their OpenSearch transport is `opensearch`."""
    real_client = dynamodb_tables.aws_client

    def client(service: str, region: str | None, read_timeout_s: float = 10.0, max_attempts: int = 3) -> Any:
        return clients.get(service) or real_client(service, region, read_timeout_s, max_attempts)

    patch.setattr(dynamodb_tables, "aws_client", client)
    patch.setattr(aws_http, "SigV4Transport", lambda endpoint, region, **_: opensearch)
