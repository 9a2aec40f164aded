"""What the memory contract suites share: a moto memory table and the fake OpenSearch, importable by the tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "aws"))
from fake_opensearch import FakeOpenSearch, matches  # noqa: E402

__all__ = ["FakeOpenSearch", "matches", "memory_table"]


@contextmanager
def memory_table() -> Iterator[Any]:
    """A DynamoDB client (moto) with an empty `memory` table of the memory store's key schema."""
    with mock_aws():
        client = boto3.client("dynamodb", region_name="eu-west-1", aws_access_key_id="testing",
                              aws_secret_access_key="testing")
        client.create_table(TableName="memory", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                       {"AttributeName": "sk", "KeyType": "RANGE"}],
                            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                                  {"AttributeName": "sk", "AttributeType": "S"}])
        yield client
