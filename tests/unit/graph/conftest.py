"""Graph test fixtures: a fresh embedded store per test, the demo graph, builders for synthetic graphs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore
from agentkb.models.graph.api import GraphSearchRequest
from agentkb.services.graph.search import search_graph
from agentkb.services.graph.write import parse_graph_write, upsert_graph
from tests.graph_payloads import DEMO, WS, assert_upstream_search, batch, demo, entity, proof, relation, sha

__all__ = ["DEMO", "WS", "batch", "demo", "entity", "proof", "relation", "search", "sha", "write"]

ROOT = Path(__file__).resolve().parents[3]
@pytest.fixture()
def store(tmp_path: Path) -> SqliteGraphStore:
    return SqliteGraphStore(Database(tmp_path / "graph.sqlite3"))


@pytest.fixture()
def demo_store(store: SqliteGraphStore) -> SqliteGraphStore:
    upsert_graph(store, parse_graph_write(demo()))
    return store


def write(store: SqliteGraphStore, payload: dict[str, Any]) -> dict[str, Any]:
    return upsert_graph(store, parse_graph_write(payload)).data.model_dump()


def search(store: SqliteGraphStore, **body: Any) -> dict[str, Any]:
    result = search_graph(store, GraphSearchRequest.model_validate({"workspaceId": WS, **body}))
    assert_upstream_search(result)  # every response honours the upstream contract
    return result
