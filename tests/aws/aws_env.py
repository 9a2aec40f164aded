"""moto-backed AWS: the tables of infra/constants.py TABLES, the pepper secret, the bucket and the ingest queue."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agentkb.adapters.aws.dynamodb_tables import aws_client
from agentkb.composition import reset_ports
from agentkb.config import reset_settings
from infra import constants as c

REGION = "eu-west-1"


@dataclass
class AwsEnv:
    tables: dict[str, str]
    secret_arn: str
    bucket: str
    queue_url: str

    def client(self, service: str) -> Any:
        return boto3.client(service, region_name=REGION)


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEnv]:
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_SESSION_TOKEN": "testing", "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION,
                        "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    aws_client.cache_clear()
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name=REGION)
        tables = {}
        for name, (pk, sk, _ttl) in c.TABLES.items():
            table = f"agentkb-test-{name.replace('_', '-')}"
            keys = [{"AttributeName": pk, "KeyType": "HASH"}] + ([{"AttributeName": sk, "KeyType": "RANGE"}]
                                                                 if sk else [])
            ddb.create_table(TableName=table, KeySchema=keys, BillingMode="PAY_PER_REQUEST",
                             AttributeDefinitions=[{"AttributeName": k["AttributeName"], "AttributeType": "S"}
                                                   for k in keys])
            tables[name] = table
        secret = boto3.client("secretsmanager", region_name=REGION).create_secret(
            Name="agentkb-test-pepper", SecretString="pepper-" + "x" * 57)
        bucket = "agentkb-test-documents"
        boto3.client("s3", region_name=REGION).create_bucket(
            Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
        queue_url = boto3.client("sqs", region_name=REGION).create_queue(QueueName="agentkb-test-ingest")["QueueUrl"]
        yield AwsEnv(tables, secret["ARN"], bucket, queue_url)
    aws_client.cache_clear()


@pytest.fixture()
def aws_settings(aws: AwsEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEnv]:
    """AGENTKB_* as the CDK stack sets them (backend=aws), against the moto resources."""
    env = {"AGENTKB_BACKEND": "aws", "AGENTKB_OPENSEARCH_ENDPOINT": "https://example.eu-west-1.aoss.amazonaws.com",
           "AGENTKB_EMBEDDING_MODEL": "amazon.titan-embed-text-v2:0", "AGENTKB_EMBEDDING_DIMENSION": "256",
           "AGENTKB_SECRET_ARN": aws.secret_arn, "AGENTKB_BUCKET": aws.bucket,
           "AGENTKB_INGEST_QUEUE_URL": aws.queue_url,
           "AGENTKB_RERANK_MODEL_ARN": f"arn:aws:bedrock:{REGION}::foundation-model/cohere.rerank-v3-5:0"}
    env.update({f"AGENTKB_{name.upper()}_TABLE": table for name, table in aws.tables.items()})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    reset_settings()
    reset_ports()
    yield aws
    reset_settings()
    reset_ports()
