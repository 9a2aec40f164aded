"""The GraphStore congruence harness: the embedded store and the DynamoDB store (moto) side by side.

Every write goes to both and must return the same counts and source hash; every read runs on both and must
answer the same (`Both.call`, `Both.search`). Payload builders: tests/graph_payloads.py.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.aws.dynamodb.graph.store import DynamoDbGraphStore
from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore
from agentkb.models.graph.api import GraphSearchRequest
from agentkb.models.graph.records import EntityRecord, GraphBatch
from agentkb.services.graph.search import search_graph
from agentkb.services.graph.write import parse_graph_write, upsert_entity_by_identity, upsert_graph
from testkit.environment import REGION
from testkit.moto_aws import AwsEnv
from tests.graph_payloads import WS, assert_upstream_search


class Both:
    """The embedded store and the DynamoDB store side by side."""

    def __init__(self, sqlite: SqliteGraphStore, ddb: DynamoDbGraphStore) -> None:
        self.sqlite, self.ddb = sqlite, ddb

    def write(self, payload: dict[str, Any]) -> dict[str, Any]:
        a = upsert_graph(self.sqlite, parse_graph_write(copy.deepcopy(payload)))
        b = upsert_graph(self.ddb, parse_graph_write(copy.deepcopy(payload)))
        assert a == b
        return a.data.model_dump()

    def upsert(self, batch: GraphBatch, ws: str = WS) -> Any:
        a, b = self.sqlite.upsert(ws, batch), self.ddb.upsert(ws, batch)
        assert a == b
        return a

    def call(self, method: str, *args: Any) -> Any:
        a, b = getattr(self.sqlite, method)(*args), getattr(self.ddb, method)(*args)
        assert a == b, method
        return a

    def identity_upsert(self, entity: EntityRecord) -> str:
        a, b = upsert_entity_by_identity(self.sqlite, WS, entity), upsert_entity_by_identity(self.ddb, WS, entity)
        assert a == b
        return a

    def search(self, **body: Any) -> dict[str, Any]:
        request = GraphSearchRequest.model_validate({"workspaceId": WS, **body})
        a, b = search_graph(self.sqlite, request), search_graph(self.ddb, request)
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True), body
        assert_upstream_search(a)
        return a


@pytest.fixture()
def both(aws: AwsEnv, tmp_path: Path) -> Iterator[Both]:
    yield Both(SqliteGraphStore(Database(tmp_path / "graph.sqlite3")),
               DynamoDbGraphStore(lambda: aws_client("dynamodb", REGION), aws.tables["graph"]))
