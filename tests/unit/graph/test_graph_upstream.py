"""POST /v1/graph takes the upstream workspace-knowledge-graph.v1 items exactly: everything upstream allows is
stored and returned unchanged, anything else is a 400 with nothing written; the models hold the upstream enums."""

from __future__ import annotations

import copy
import json
from typing import Any, get_args

import pytest

from agentkb.errors import BadRequest
from agentkb.models.graph.api import (
    EntityKind,
    GraphEntity,
    GraphProof,
    GraphRelation,
    GraphSearchRequest,
    RelationKind,
)
from conftest import WS, batch, entity, proof, relation, search, write
from tests.graph_payloads import ROOT, upstream_document

GRAPH = upstream_document("workspace-knowledge-graph.v1.json")["properties"]
ITEMS = {name: GRAPH[name]["items"] for name in ("entities", "relations", "proofs")}


def test_the_models_hold_the_upstream_enums_fields_and_required_sets() -> None:
    assert list(get_args(EntityKind)) == ITEMS["entities"]["properties"]["kind"]["enum"]
    assert list(get_args(RelationKind)) == ITEMS["relations"]["properties"]["kind"]["enum"]
    for model, item in ((GraphEntity, ITEMS["entities"]), (GraphRelation, ITEMS["relations"]),
                        (GraphProof, ITEMS["proofs"])):
        schema = model.model_json_schema(by_alias=True)
        assert set(schema["properties"]) == set(item["properties"]), model.__name__
        assert set(schema["required"]) == set(item["required"]), model.__name__
    for field in ("derivation", "trust", "confidence", "freshness"):
        enum = ITEMS["proofs"]["properties"][field]["enum"]
        assert list(get_args(GraphProof.model_fields[field].annotation)) == enum


def _upstream_batch() -> dict[str, Any]:
    """Every optional upstream field set, every scalar attribute type (null included)."""
    p = {**proof("p1"), "pointer": "", "line": 3, "column": 7, "detail": "line 3 opens the client",
         "observedAt": "2025-01-01T10:00:00.250+02:00", "trust": "corroborated", "confidence": "low",
         "derivation": "inferred", "freshness": "stale"}
    bare = {k: v for k, v in proof("p2").items() if k != "contentHash"}  # contentHash is optional upstream
    a = entity("n1", "alpha", proofs=["p1", "p2"], aliases=["", "Alpha One"],
               attributes={"s": "x", "n": 1.5, "b": False, "none": None, "list": ["a", 1, True, None]})
    return batch([a, entity("n2", "beta")], [relation("r1", "n1", "n2", ["p1"], kind="writes-to")], [p, bare])


def test_every_upstream_field_is_stored_and_returned_unchanged(store: Any) -> None:
    payload = _upstream_batch()
    write(store, copy.deepcopy(payload))
    body = search(store, query="alpha")  # validated against the upstream documents
    assert body["entities"][0] == payload["entities"][0]
    assert body["relations"] == payload["relations"]
    assert sorted(body["proofs"], key=lambda p: p["id"]) == payload["proofs"]


@pytest.mark.parametrize("kind", get_args(RelationKind))
def test_every_upstream_relation_kind_is_accepted(store: Any, kind: str) -> None:
    payload = batch([entity("n1", "alpha"), entity("n2", "beta")], [relation("r1", "n1", "n2", ["p1"], kind=kind)],
                    [proof("p1")])
    assert write(store, payload)["relations"] == 1


@pytest.mark.parametrize("kind", get_args(EntityKind))
def test_every_upstream_entity_kind_is_stored_and_a_kind_filter(store: Any, kind: str) -> None:
    write(store, batch([entity("n1", "alpha thing", kind=kind), entity("n2", "alpha other", kind="owner"
                                                                       if kind != "owner" else "file")]))
    assert GraphSearchRequest.model_validate({"workspaceId": WS, "query": "alpha", "kind": kind}).kind == kind
    assert [e["id"] for e in search(store, query="alpha", kind=kind)["entities"]] == ["n1"]


def _break(payload: dict[str, Any], section: str, index: int, field: str, value: Any) -> dict[str, Any]:
    item = payload[section][index]
    if value is _MISSING:
        item.pop(field)
    else:
        item[field] = value
    return payload


_MISSING = object()


@pytest.mark.parametrize(("section", "index", "field", "value"), [
    ("proofs", 0, "derivation", _MISSING), ("proofs", 0, "trust", _MISSING), ("proofs", 0, "confidence", _MISSING),
    ("proofs", 0, "freshness", _MISSING), ("proofs", 0, "observedAt", "2025-01-01"),
    ("proofs", 0, "observedAt", "2025-01-01 10:00:00"), ("proofs", 0, "line", 0), ("proofs", 0, "column", "3"),
    ("proofs", 0, "trust", "verified"), ("proofs", 0, "extra", 1),
    ("entities", 0, "kind", "person"), ("entities", 0, "kind", "repo"), ("entities", 0, "kind", "topic"),
    ("entities", 0, "proofIds", ["p1", "p1"]), ("entities", 0, "attributes", _MISSING),
    ("entities", 0, "proofIds", _MISSING), ("entities", 0, "attributes", {"nested": {"a": 1}}),
    ("relations", 0, "kind", "writes"), ("relations", 0, "kind", "mentions"), ("relations", 0, "kind", "decides"),
    ("relations", 0, "proofIds", ["p1", "p1"]), ("relations", 0, "confidence", _MISSING),
])
def test_anything_upstream_refuses_is_a_400_and_nothing_is_written(store: Any, section: str, index: int,
                                                                     field: str, value: Any) -> None:
    before = store.source_hash(WS)
    with pytest.raises(BadRequest):
        write(store, _break(_upstream_batch(), section, index, field, value))
    assert store.source_hash(WS) == before and store.existing_entity_ids(WS, ["n1", "n2"]) == set()


@pytest.mark.parametrize("field", ["fingerprint", "aliases", "scope"])
def test_an_identity_without_its_required_fields_is_a_400(store: Any, field: str) -> None:
    payload = _upstream_batch()
    del payload["entities"][0]["identity"][field]
    with pytest.raises(BadRequest):
        write(store, payload)


@pytest.mark.parametrize("name", ["workspace-knowledge-graph.v1", "workspace-dependency-graph.v1"])
def test_our_published_graph_schemas_are_the_upstream_documents(name: str) -> None:
    assert json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text()) == upstream_document(f"{name}.json")
