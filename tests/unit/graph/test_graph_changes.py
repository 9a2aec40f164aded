"""The pure change set both graph engines write: change detection, index deltas, ranks, weights, removals."""

from __future__ import annotations

import dataclasses

from agentkb.models.graph.records import EntityRecord, GraphBatch, ProofRecord, RelationRecord
from agentkb.models.graph.text import canonical_json
from agentkb.services.graph.changes import (
    PriorGraph,
    decode_entity,
    decode_proof,
    encode_doc,
    plan_upsert,
    relation_rank,
    relation_weight,
)

ALPHA = EntityRecord("e1", "service", "billing api", None, "svc/billing", "workspace", ("payments",), "0" * 64,
                     {"lang": "python"})
PROOF = ProofRecord("p1", "t", "a.py", "2025-01-01T00:00:00Z", "extracted", "authoritative", "high", "fresh")


def _stored(entity: EntityRecord) -> tuple[str, str]:
    return encode_doc(entity.doc()), canonical_json(entity.doc())


def test_new_items_are_changes_with_their_terms_and_counts() -> None:
    changes = plan_upsert(GraphBatch(entities=(ALPHA,), proofs=(PROOF,)), PriorGraph())
    (change,) = changes.entities
    assert change.before is None and change.terms == {"billing": 2, "api": 2, "svc": 2, "payments": 2, "python": 1}
    assert changes.df == dict.fromkeys(change.terms, 1) and changes.entity_count_delta == 1
    assert changes.counts.changed and (changes.counts.entities, changes.counts.proofs) == (1, 1)
    assert decode_entity(change.doc) == ALPHA and decode_proof(changes.proofs[0].doc) == PROOF


def test_unchanged_items_are_no_change_and_a_moved_timestamp_is_stored_but_no_change() -> None:
    prior = PriorGraph(entities={"e1": _stored(ALPHA)},
                       proofs={"p1": canonical_json(PROOF.doc(with_timestamp=False))})
    later = dataclasses.replace(PROOF, observed_at="2030-01-01T00:00:00Z")
    changes = plan_upsert(GraphBatch(entities=(ALPHA,), proofs=(later,)), prior)
    assert changes.entities == () and not changes.counts.changed
    assert changes.proofs[0].proof == later and not changes.proofs[0].changed


def test_a_rename_moves_only_the_terms_that_changed_and_a_project_move_is_reported() -> None:
    renamed = dataclasses.replace(ALPHA, label="ledger api", project_id="p")
    changes = plan_upsert(GraphBatch(entities=(renamed,)), PriorGraph(entities={"e1": _stored(ALPHA)}))
    assert changes.df == {"ledger": 1} and changes.moved == {"e1"}  # "billing" stays: it is in the key
    assert changes.entity_count_delta == 0


def test_removals_take_their_terms_and_count_and_an_unknown_id_is_nothing() -> None:
    changes = plan_upsert(GraphBatch(removed_entities=("e1", "ghost")), PriorGraph(entities={"e1": _stored(ALPHA)}))
    assert [e.id for e in changes.removed] == ["e1"] and changes.entity_count_delta == -1
    assert set(changes.df.values()) == {-1} and changes.counts.changed and changes.moved == {"e1"}


def test_relations_get_rank_and_weight_and_the_last_copy_of_an_id_wins() -> None:
    first = RelationRecord("r", "a", "b", "calls", "extracted", "observed", "low", proof_ids=("p",))
    last = dataclasses.replace(first, trust="authoritative", confidence="high")
    changes = plan_upsert(GraphBatch(relations=(first, last)), PriorGraph())
    (change,) = changes.relations
    assert change.relation.trust == "authoritative" and change.rank == 0 and change.relation.weight == 1.0
    assert changes.counts.relations == 1
    assert relation_rank("ambiguous", "low") == 14 and relation_rank("other", "other") == 19
    assert relation_weight(dataclasses.replace(first, weight=0.25)) == 0.25 and relation_weight(first) == 0.3


def test_a_proof_stored_before_the_upstream_model_decodes_with_legacy_evidence() -> None:
    legacy = '{"id":"p","provider":"t","artifact":"a.py","contentHash":"%s","observedAt":"x","freshness":"fresh"}'
    proof = decode_proof(legacy % ("a" * 64))
    assert (proof.derivation, proof.trust, proof.confidence, proof.freshness) == (
        "extracted", "observed", "medium", "fresh")
