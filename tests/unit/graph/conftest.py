"""Graph test fixtures: a fresh embedded store per test, the demo graph, builders for synthetic graphs."""

from __future__ import annotations

import copy
import hashlib
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

ROOT = Path(__file__).resolve().parents[3]
DEMO = json.loads((ROOT / "functions/agentkb/local/demo/graph.json").read_text())
SEARCH_SCHEMA = json.loads((ROOT / "schemas/workspace-knowledge-search.v1.schema.json").read_text())
GRAPH_SCHEMA = json.loads((ROOT / "schemas/workspace-knowledge-graph.v1.schema.json").read_text())
WS = "demo"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


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


def demo() -> dict[str, Any]:
    return copy.deepcopy(DEMO)


def write(store: SqliteGraphStore, payload: dict[str, Any]) -> dict[str, Any]:
    return upsert_graph(store, parse_graph_write(payload))["data"]


def search(store: SqliteGraphStore, **body: Any) -> dict[str, Any]:
    result = search_graph(store, GraphSearchRequest.model_validate({"workspaceId": WS, **body}))
    errors = sorted(search_validator().iter_errors(result), key=str)
    assert not errors, [e.message for e in errors[:3]]  # every response honours the shared contract
    return result


def proof(pid: str, artifact: str = "src/app.py") -> dict[str, Any]:
    return {"id": pid, "provider": "test", "artifact": artifact, "contentHash": sha(pid),
            "observedAt": "2025-01-01T00:00:00Z", "freshness": "fresh"}


def entity(eid: str, label: str, kind: str = "service", *, key: str | None = None, aliases: list[str] | None = None,
           project: str | None = None, proofs: list[str] | None = None, attributes: dict[str, Any] | None = None,
           ) -> dict[str, Any]:
    e: dict[str, Any] = {"id": eid, "kind": kind, "label": label,
                         "identity": {"key": key or eid, "scope": "project" if project else "workspace",
                                      "aliases": aliases or []},
                         "attributes": attributes or {}, "proofIds": proofs or []}
    if project:
        e["projectId"] = project
    return e


def relation(rid: str, a: str, b: str, proofs: list[str], *, kind: str = "depends-on", trust: str = "authoritative",
             confidence: str = "high") -> dict[str, Any]:
    return {"id": rid, "from": a, "to": b, "kind": kind, "derivation": "extracted", "trust": trust,
            "confidence": confidence, "proofIds": proofs}


def batch(entities: list[dict[str, Any]], relations: list[dict[str, Any]] | None = None,
          proofs: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {"workspaceId": WS, "entities": entities, "relations": relations or [], "proofs": proofs or [], **extra}
