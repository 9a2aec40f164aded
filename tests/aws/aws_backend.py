"""The whole AGENTKB_BACKEND=aws container for handler tests: moto (DynamoDB, Secrets Manager, S3, SQS) from
aws_env.py, plus the two dependencies moto cannot serve, swapped in where the factory builds them (testkit/):

- bedrock-runtime / bedrock-agent-runtime: `aws_client(service, ...)` answers a deterministic fake (moto's
  invoke_model returns `{}`); a test may put a botocore-Stubbed real client in `AwsBackend.clients` instead.
- OpenSearch: `SigV4Transport(...)` answers the in-memory FakeOpenSearch.

The doubles live in testkit/ (the benchmarks use them too) and stay importable from here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from aws_env import REGION, AwsEnv
from botocore.exceptions import ClientError

from agentkb.adapters.aws.dynamodb import tables as dynamodb_tables
from agentkb.composition import get_ports
from agentkb.services.access.api_keys import create_api_key
from testkit.bedrock import FakeAgentRuntime, FakeBedrockRuntime, hashed_embedding
from testkit.fake_opensearch import FakeOpenSearch
from testkit.moto_aws import one_backup_per_table as _one_backup_per_table
from testkit.moto_aws import route_to_doubles

__all__ = ["TABLE_CALLS", "AwsBackend", "FakeAgentRuntime", "FakeBedrockRuntime", "FakeOpenSearch",
           "_one_backup_per_table", "aws_backend", "hashed_embedding", "throttle"]


@dataclass
class AwsBackend:
    env: AwsEnv
    opensearch: FakeOpenSearch
    bedrock: FakeBedrockRuntime
    clients: dict[str, Any] = field(default_factory=dict)

    def key(self, workspaces: list[str], scopes: list[str], principal: str = "alice") -> str:
        """An API key minted through the AWS key store (DynamoDB hash, Secrets Manager pepper)."""
        container = get_ports()
        minted, _ = create_api_key(container.keys, container.secrets, workspaces, scopes, principal)
        return minted


@pytest.fixture()
def aws_backend(aws_settings: AwsEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsBackend]:
    _one_backup_per_table(monkeypatch)
    backend = AwsBackend(aws_settings, FakeOpenSearch(), FakeBedrockRuntime())
    backend.clients.update({"bedrock-runtime": backend.bedrock, "bedrock-agent-runtime": FakeAgentRuntime()})
    route_to_doubles(monkeypatch, backend.clients, backend.opensearch)
    yield backend


TABLE_CALLS = ("get_item", "put_item", "update_item", "delete_item", "query", "batch_get_item", "batch_write_item",
               "transact_write_items", "transact_get_items")


def throttle(monkeypatch: pytest.MonkeyPatch, table: str) -> None:
    """Every call of the shared DynamoDB client that touches `table` fails with ProvisionedThroughputExceeded."""
    client = dynamodb_tables.aws_client("dynamodb", REGION, 10.0, 3)

    def touches(params: dict[str, Any]) -> bool:
        return table in json.dumps(params, default=str)

    def refusing(name: str) -> Any:
        real = getattr(client, name)

        def call(*args: Any, **params: Any) -> Any:
            if touches(params):
                raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException",
                                             "Message": "Rate of requests exceeds the allowed throughput."}}, name)
            return real(*args, **params)

        return call

    for name in TABLE_CALLS:
        monkeypatch.setattr(client, name, refusing(name))
