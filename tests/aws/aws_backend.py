"""The whole AGENTKB_BACKEND=aws container for handler tests: moto (DynamoDB, Secrets Manager, S3, SQS) from
aws_env.py, plus the two dependencies moto cannot serve, swapped in where the factory builds them:

- bedrock-runtime / bedrock-agent-runtime: `aws_client(service, ...)` answers a deterministic fake (moto's
  invoke_model returns `{}`); a test may put a botocore-Stubbed real client in `AwsBackend.clients` instead.
- OpenSearch: `SigV4Transport(...)` answers the in-memory FakeOpenSearch (fake_opensearch.py).

moto's TransactWriteItems deep-copies the whole table once per item of the transaction (its rollback backup):
a 25-item graph write over a seeded graph table took ~2 s. `_one_backup_per_table` keeps moto's rollback but
copies each table once per transaction.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import moto.dynamodb.models as moto_dynamodb
import pytest
from aws_env import REGION, AwsEnv
from botocore.exceptions import ClientError
from botocore.response import StreamingBody
from fake_opensearch import FakeOpenSearch, analyze

from agentkb.adapters.aws import aws_http, dynamodb_tables
from agentkb.composition import get_ports
from agentkb.services.auth import create_api_key


def hashed_embedding(text: str, dimension: int) -> list[float]:
    """Feature-hashed bag of words, L2-normalised: texts sharing words are close, and it never changes."""
    vector = [0.0] * dimension
    vector[0] = 0.05  # no text embeds to the zero vector
    for word in analyze(text):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dimension] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(v * v for v in vector) ** 0.5
    return [v / norm for v in vector]


def _streaming(payload: Any) -> StreamingBody:
    raw = json.dumps(payload).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


class FakeBedrockRuntime:
    """invoke_model of Titan Text Embeddings v2, answered with hashed_embedding; counts the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def invoke_model(self, *, modelId: str, body: str, contentType: str, accept: str) -> dict[str, Any]:
        self.calls += 1
        request = json.loads(body)
        assert request["normalize"] is True
        return {"body": _streaming({"embedding": hashed_embedding(request["inputText"], request["dimensions"]),
                                    "inputTextTokenCount": len(request["inputText"].split())})}


class FakeAgentRuntime:
    """rerank of Cohere Rerank 3.5: relevance = share of the query's words found in the passage."""

    def rerank(self, **request: Any) -> dict[str, Any]:
        query = set(analyze(request["queries"][0]["textQuery"]["text"]))
        results = []
        for position, source in enumerate(request["sources"]):
            words = set(analyze(source["inlineDocumentSource"]["textDocument"]["text"]))
            results.append({"index": position, "relevanceScore": len(query & words) / max(1, len(query))})
        return {"results": sorted(results, key=lambda r: -r["relevanceScore"])}


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


class _TableCopies:
    """Stands in for moto's `copy` module: inside one transaction a table is deep-copied once, then reused."""

    def __init__(self) -> None:
        self.backups: dict[int, Any] | None = None

    def deepcopy(self, value: Any, memo: Any = None) -> Any:
        if self.backups is None or not isinstance(value, moto_dynamodb.Table):
            return copy.deepcopy(value, memo)
        if id(value) not in self.backups:
            self.backups[id(value)] = copy.deepcopy(value)
        return self.backups[id(value)]

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)


def _one_backup_per_table(monkeypatch: pytest.MonkeyPatch) -> None:
    copies = _TableCopies()
    transact = moto_dynamodb.DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: Any) -> None:
        copies.backups = {}
        try:
            transact(self, transact_items)
        finally:
            copies.backups = None

    monkeypatch.setattr(moto_dynamodb, "copy", copies)
    monkeypatch.setattr(moto_dynamodb.DynamoDBBackend, "transact_write_items", transact_write_items)


@pytest.fixture()
def aws_backend(aws_settings: AwsEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsBackend]:
    _one_backup_per_table(monkeypatch)
    backend = AwsBackend(aws_settings, FakeOpenSearch(), FakeBedrockRuntime())
    backend.clients.update({"bedrock-runtime": backend.bedrock, "bedrock-agent-runtime": FakeAgentRuntime()})
    real_client = dynamodb_tables.aws_client

    def client(service: str, region: str | None, read_timeout_s: float = 10.0, max_attempts: int = 3) -> Any:
        return backend.clients.get(service) or real_client(service, region, read_timeout_s, max_attempts)

    monkeypatch.setattr(dynamodb_tables, "aws_client", client)
    monkeypatch.setattr(aws_http, "SigV4Transport", lambda endpoint, region, **_: backend.opensearch)
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
