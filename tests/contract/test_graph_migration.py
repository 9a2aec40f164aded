"""Graphs stored before the upstream model: migrated on open (embedded) and by `agentkb graph migrate` (AWS), to the
same upstream-valid graph on both engines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graph_engines import Both

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.graph.store import SqliteGraphStore
from agentkb.models.graph.records import EntityRecord, GraphBatch, ProofRecord, RelationRecord
from agentkb.models.graph.text import canonical_json, identity_fingerprint
from agentkb.services.graph.migration import migrate_graph
from tests.graph_payloads import WS, sha


def _entity(eid: str, kind: str, label: str, **attributes: Any) -> EntityRecord:
    return EntityRecord(eid, kind, label, None, label, "workspace", (), identity_fingerprint(kind, None, label),
                        attributes)


PROOF = ProofRecord("proof:old", "test", "src/app.py", "2025-01-01T00:00:00Z", "extracted", "observed", "medium",
                    "fresh", content_hash=sha("old"))
LEGACY_PROOF_DOC = {"id": "proof:old", "provider": "test", "artifact": "src/app.py", "contentHash": sha("old"),
                    "observedAt": "2025-01-01T00:00:00Z", "freshness": "fresh"}
LEGACY = GraphBatch(
    entities=(_entity("svc:billing", "service", "billing-api"), _entity("person:ada", "person", "Ada"),
              _entity("dec:adr-1", "decision", "adr 1"), _entity("owner:ada", "owner", "Ada"),
              _entity("mem-repo:0123456789abcdef0123", "repo", "billing-api", origin="memory")),
    relations=(RelationRecord("r:writes", "svc:billing", "dec:adr-1", "writes", "extracted", "authoritative", "high",
                              proof_ids=("proof:old",)),
               RelationRecord("r:decides", "dec:adr-1", "svc:billing", "decides", "authored", "observed", "medium",
                              proof_ids=("proof:old",)),
               RelationRecord("r:maintains", "person:ada", "svc:billing", "maintains", "inferred", "observed", "low",
                              proof_ids=("proof:old",)),
               RelationRecord("mem-rel:1", "mem-repo:0123456789abcdef0123", "svc:billing", "mentions", "authored",
                              "observed", "medium", weight=0.8)),
    proofs=(PROOF,))


def _seed_legacy(both: Both, aws_graph_table: str, ddb_client: Any) -> None:
    """Write the legacy graph, then turn the proof back into its pre-upstream document (no derivation/trust/...)."""
    both.sqlite.upsert(WS, LEGACY)
    both.ddb.upsert(WS, LEGACY)
    doc, canon = json.dumps(LEGACY_PROOF_DOC), canonical_json({k: v for k, v in LEGACY_PROOF_DOC.items()
                                                               if k != "observedAt"})
    both.sqlite._db.connection().execute("UPDATE graph_proofs SET doc = ?, canon = ? WHERE id = ?",
                                         (doc, canon, "proof:old"))
    ddb_client.put_item(TableName=aws_graph_table, Item={"pk": {"S": f"G#{WS}"}, "sk": {"S": "P#proof:old"},
                                                         "doc": {"S": doc}, "canon": {"S": canon}})


def test_legacy_graphs_migrate_on_open_and_by_command_to_the_same_upstream_graph(both: Both, aws: Any,
                                                                                  tmp_path: Path) -> None:
    # Given the same pre-upstream graph on both engines (a memory stub, legacy kinds, a proof without evidence)
    _seed_legacy(both, aws.tables["graph"], aws.client("dynamodb"))
    both.sqlite._db.connection().execute("DELETE FROM graph_format")  # as a database written by an earlier version
    # When the embedded database is opened again, and the operator runs the migration on AWS
    reopened = SqliteGraphStore(Database(both.sqlite._db.path))
    report = migrate_graph(both.ddb)
    both.sqlite = reopened
    # Then both hold the same upstream graph
    assert report == {WS: {"entities": 1, "relations": 3, "proofs": 1, "removedMemoryStubs": 1}}
    assert both.call("existing_entity_ids", WS, ["mem-repo:0123456789abcdef0123"]) == set()
    (ada,) = both.call("entities", WS, ["person:ada"])
    assert (ada.kind, ada.attributes["legacyKind"], ada.identity_key) == ("owner", "person", "Ada#person")
    body = both.search(query="billing-api")  # validated against the upstream documents on both engines
    assert [e["id"] for e in body["entities"]] == ["svc:billing"]
    kinds = {(r["from"], r["kind"], r["to"]) for r in body["relations"]}
    assert kinds == {("svc:billing", "writes-to", "dec:adr-1"), ("svc:billing", "decided-by", "dec:adr-1"),
                     ("person:ada", "owns", "svc:billing")}
    assert body["proofs"][0] == {**LEGACY_PROOF_DOC, "derivation": "extracted", "trust": "observed",
                                 "confidence": "medium"}
    both.call("source_hash", WS)
    # And the memory edge still drives recall's walk from the stub's id (now recall's own entity space)
    assert both.call("neighbours", WS, ["mem-repo:0123456789abcdef0123"], 0.3, 8) == [
        ("mem-repo:0123456789abcdef0123", "svc:billing", "mentions", 0.8)]
    # And a second run has nothing left to do
    assert migrate_graph(both.ddb) == {} and migrate_graph(both.sqlite) == {}
