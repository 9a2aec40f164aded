"""Graph test fixtures: a fresh embedded store per test, the demo graph, builders for synthetic graphs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from agentkb.adapters.embedded.sqlite_db import Database
from agentkb.adapters.embedded.sqlite_graph import SqliteGraphStore
from agentkb.models.graph import GraphSearchRequest
from agentkb.services.graph_search import search_graph
from agentkb.services.graph_write import parse_graph_write, upsert_graph
from tests.graph_payloads import DEMO, WS, batch, demo, entity, proof, relation, sha

__all__ = ["DEMO", "WS", "batch", "demo", "entity", "proof", "relation", "search", "sha", "write"]

ROOT = Path(__file__).resolve().parents[3]
SEARCH_SCHEMA = json.loads((ROOT / "schemas/workspace-knowledge-search.v1.schema.json").read_text())
GRAPH_SCHEMA = json.loads((ROOT / "schemas/workspace-knowledge-graph.v1.schema.json").read_text())


def search_validator() -> Draft202012Validator:
    """The shared response contract with its external graph refs resolved from our companion schema."""
    registry = Registry().with_resources([
        (GRAPH_SCHEMA["$id"], Resource.from_contents(GRAPH_SCHEMA)),
        (SEARCH_SCHEMA["$id"], Resource.from_contents(SEARCH_SCHEMA)),
    ])
    return Draft202012Validator(SEARCH_SCHEMA, registry=registry)


@pytest.fixture()
def store(tmp_path: Path) -> SqliteGraphStore:
    return SqliteGraphStore(Database(tmp_path / "graph.sqlite3"))


@pytest.fixture()
def demo_store(store: SqliteGraphStore) -> SqliteGraphStore:
    upsert_graph(store, parse_graph_write(demo()))
    return store


def write(store: SqliteGraphStore, payload: dict[str, Any]) -> dict[str, Any]:
    return upsert_graph(store, parse_graph_write(payload))["data"]


def search(store: SqliteGraphStore, **body: Any) -> dict[str, Any]:
    result = search_graph(store, GraphSearchRequest.model_validate({"workspaceId": WS, **body}))
    errors = sorted(search_validator().iter_errors(result), key=str)
    assert not errors, [e.message for e in errors[:3]]  # every response honours the shared contract
    return result
