"""The whole AGENTKB_BACKEND=aws engine for handler tests: moto (DynamoDB, Secrets Manager, S3, SQS, moto_aws.py),
plus the two dependencies moto cannot serve, swapped in where the factory builds them:

- bedrock-runtime / bedrock-agent-runtime: `aws_client(service, ...)` answers a deterministic fake (moto's
  invoke_model returns `{}`); a test may put a botocore-Stubbed real client in `AwsBackend.clients` instead.
- OpenSearch: `SigV4Transport(...)` answers the in-memory FakeOpenSearch.

tests/conftest.py's `aws_backend` fixture builds one per test; `throttle` makes one table refuse every call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from agentkb.adapters.aws.dynamodb import tables as dynamodb_tables
from agentkb.composition import get_ports
from agentkb.services.access.api_keys import create_api_key
from testkit.bedrock import FakeBedrockRuntime
from testkit.environment import REGION
from testkit.fake_opensearch import FakeOpenSearch
from testkit.moto_aws import AwsEnv
from testkit.patches import Patcher


@dataclass
class AwsBackend:
    env: AwsEnv
    opensearch: FakeOpenSearch
    bedrock: FakeBedrockRuntime
    clients: dict[str, Any] = field(default_factory=dict)

    def key(self, workspaces: list[str], scopes: list[str], principal: str = "alice") -> str:
        """An API key minted through the AWS key store (DynamoDB hash, Secrets Manager pepper)."""
        ports = get_ports()
        minted, _ = create_api_key(ports.keys, ports.secrets, workspaces, scopes, principal)
        return minted


TABLE_CALLS = ("get_item", "put_item", "update_item", "delete_item", "query", "batch_get_item", "batch_write_item",
               "transact_write_items", "transact_get_items")


def throttle(patch: Patcher, table: str) -> None:
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
        patch.setattr(client, name, refusing(name))
