"""Graph writes: counts, idempotent upserts, and every rejection leaves the store untouched."""

from __future__ import annotations

from typing import Any

import pytest

from agentkb.errors import BadRequest, Conflict
from conftest import WS, batch, demo, entity, proof, relation, search, sha, write


def test_demo_import_counts_and_hash(store: Any) -> None:
    data = write(store, demo())
    assert (data["entities"], data["relations"], data["proofs"]) == (11, 10, 10)
    assert len(data["graphSourceHash"]) == 64


def test_reupserting_identical_data_keeps_version_and_hash(store: Any) -> None:
    first = write(store, demo())
    version = store._db.connection().execute("SELECT version FROM graph_meta").fetchone()[0]
    again = demo()
    for p in again["proofs"]:
        p["observedAt"] = "2030-06-01T00:00:00Z"  # timestamps are not part of the graph's identity
    assert write(store, again)["graphSourceHash"] == first["graphSourceHash"]
    assert store._db.connection().execute("SELECT version FROM graph_meta").fetchone()[0] == version


def test_a_real_change_moves_the_hash(store: Any) -> None:
    first = write(store, demo())["graphSourceHash"]
    changed = demo()
    changed["entities"][0]["label"] = "billing-api-v2"
    second = write(store, changed)["graphSourceHash"]
    assert second != first
    assert search(store, query="billing")["graphSourceHash"] == second


def test_same_graph_in_another_store_has_the_same_hash(store: Any, tmp_path: Any) -> None:
    from agentkb.adapters.embedded.sqlite.db import Database
    from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore

    other = SqliteGraphStore(Database(tmp_path / "other.sqlite3"))
    shuffled = demo()
    shuffled["entities"].reverse()
    shuffled["relations"].reverse()
    assert write(store, demo())["graphSourceHash"] == write(other, shuffled)["graphSourceHash"]


def _rejected(store: Any, payload: dict[str, Any]) -> dict[str, Any]:
    before = store.source_hash(WS)
    with pytest.raises(BadRequest) as caught:
        write(store, payload)
    assert store.source_hash(WS) == before  # nothing written
    assert store.existing_entity_ids(WS, ["n1", "n2"]) == set()
    return caught.value.details


def _two_nodes(**rel: Any) -> dict[str, Any]:
    r = relation("r1", "n1", "n2", ["p1"])
    r.update(rel)
    return batch([entity("n1", "alpha", proofs=["p1"]), entity("n2", "beta")], [r], [proof("p1")])


def test_valid_two_node_batch_is_accepted(store: Any) -> None:
    assert write(store, _two_nodes())["relations"] == 1


@pytest.mark.parametrize("change", [
    {"proofIds": []},  # a relation without a proof
    {"to": "ghost"},  # an endpoint that exists neither in the batch nor in the store
    {"proofIds": ["p-missing"]},  # a proof id that resolves nowhere
    {"kind": "teleports-to"},  # unknown relation kind
    {"trust": "certain"},  # unknown enum
    {"derivation": "guessed"},
])
def test_bad_relations_are_rejected_whole(store: Any, change: dict[str, Any]) -> None:
    details = _rejected(store, _two_nodes(**change))
    assert details["issues"]
    assert "ghost" not in str(details) and "p-missing" not in str(details)  # paths, never echoed input


@pytest.mark.parametrize("artifact", ["/etc/passwd", "C:\\repo\\x.py", "c:/repo/x.py", "file:///repo/x.py",
                                      "~/repo/x.py", "\\\\server\\share\\x.py"])
def test_absolute_local_artifacts_are_rejected(store: Any, artifact: str) -> None:
    payload = _two_nodes()
    payload["proofs"][0]["artifact"] = artifact
    _rejected(store, payload)


@pytest.mark.parametrize("artifact", ["services/billing/openapi.yaml", "https://github.com/acme/billing/blob/main/x",
                                      "s3://bucket/key", "docs/adr/0007.md"])
def test_relative_paths_and_uris_are_accepted(store: Any, artifact: str) -> None:
    payload = _two_nodes()
    payload["proofs"][0]["artifact"] = artifact
    assert write(store, payload)["proofs"] == 1


@pytest.mark.parametrize("where,value", [
    ("contentHash", "ABC"), ("contentHash", sha("x").upper()), ("contentHash", sha("x")[:63]),
    ("fingerprint", "not-a-hash"), ("fingerprint", sha("x") + "0"),
])
def test_malformed_hashes_are_rejected(store: Any, where: str, value: str) -> None:
    payload = _two_nodes()
    if where == "contentHash":
        payload["proofs"][0]["contentHash"] = value
    else:
        payload["entities"][0]["identity"]["fingerprint"] = value
    _rejected(store, payload)


def test_unknown_entity_kind_and_extra_fields_are_rejected(store: Any) -> None:
    payload = _two_nodes()
    payload["entities"][0]["kind"] = "spaceship"
    _rejected(store, payload)
    payload = _two_nodes()
    payload["entities"][0]["colour"] = "red"
    _rejected(store, payload)


def test_entity_citing_a_missing_proof_is_rejected(store: Any) -> None:
    payload = _two_nodes()
    payload["entities"][1]["proofIds"] = ["nope"]
    details = _rejected(store, payload)
    assert details["issues"][0]["path"] == "entities.1.proofIds.0"


def test_relation_may_use_endpoints_and_proofs_already_stored(store: Any) -> None:
    write(store, _two_nodes())
    assert write(store, batch([], [relation("r2", "n2", "n1", ["p1"])]))["relations"] == 1


def test_project_scope_rules(store: Any) -> None:
    # a project-scope entity without a project anywhere, and a workspace-scope entity with one
    payload = batch([entity("n1", "alpha", project="p")])
    payload["entities"][0].pop("projectId")
    _rejected(store, payload)
    payload = batch([entity("n1", "alpha")])
    payload["entities"][0]["projectId"] = "p"
    _rejected(store, payload)
    # the batch's projectId is the default of project-scope entities
    payload = batch([entity("n1", "alpha", project="p")], projectId="p")
    payload["entities"][0].pop("projectId")
    write(store, payload)
    assert store.entities(WS, ["n1"])[0].project_id == "p"


def test_identity_clash_in_batch_is_400_and_with_store_is_409(store: Any) -> None:
    _rejected(store, batch([entity("n1", "a", key="same"), entity("n2", "b", key="same")]))
    write(store, batch([entity("n1", "a", key="same")]))
    with pytest.raises(Conflict):
        write(store, batch([entity("n9", "b", key="same")]))


def test_upsert_entity_by_identity_reuses_the_stored_id(store: Any) -> None:
    import dataclasses

    from agentkb.models.graph.records import EntityRecord, RelationRecord
    from agentkb.models.graph.text import identity_fingerprint
    from agentkb.services.graph.write import upsert_entity_by_identity

    def person(eid: str) -> EntityRecord:
        return EntityRecord(id=eid, kind="owner", label="Ada", project_id=None, identity_key="ada@example.com",
                            identity_scope="workspace", aliases=(), fingerprint=identity_fingerprint(
                                "owner", None, "ada@example.com"))

    assert upsert_entity_by_identity(store, WS, person("m1")) == "m1"
    assert upsert_entity_by_identity(store, WS, person("m2")) == "m1"
    upsert_entity_by_identity(store, WS, dataclasses.replace(person("t1"), kind="document", identity_key="billing"))
    from agentkb.models.graph.records import GraphBatch

    store.upsert(WS, GraphBatch(relations=(RelationRecord("w1", "m1", "t1", "mentions", weight=0.9),
                                           RelationRecord("w2", "m1", "t1", "related-to", weight=0.2))))
    assert store.neighbours(WS, ["m1"], 0.5, 8) == [("m1", "t1", "mentions", 0.9)]
    assert search(store, query="Ada")["relations"] == []  # proof-less memory relations never surface here


def test_cli_import_writes_and_rejects_with_one_line(tmp_path: Any, capsys: Any) -> None:
    import json

    from agentkb.cli.main import main

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(batch([], [relation("r", "a", "b", ["x"])])))
    assert main(["graph", "import", str(bad), "--workspace", "w", "--data-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    good = tmp_path / "demo.json"
    good.write_text(json.dumps(demo()))
    assert main(["graph", "import", str(good), "--workspace", "w", "--data-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["entities"] == 11


def test_an_entity_too_large_for_one_dynamodb_item_is_a_400_on_every_engine(store: Any) -> None:
    # Given an entity whose stored document would exceed what one DynamoDB item holds (twice, doc + canon)
    big = entity("svc:big", "big")
    big["attributes"] = {f"a{i}": ["y" * 400] * 10 for i in range(40)}
    # When it is written, Then the batch is refused with a path to the entity and nothing is stored
    with pytest.raises(BadRequest) as caught:
        write(store, batch([entity("svc:ok", "ok"), big]))
    assert caught.value.details["issues"] == [{"path": "entities.1", "message": "larger than 128 KB"}]
    assert search(store, query="ok")["entities"] == []
