"""Graph writes as a pure change set: what a batch changes, computed once for every engine.

An engine reads the stored state of the batch's ids (`PriorGraph`), calls `plan_upsert`, and writes what the
change set says: changed entities with the index terms, names and document-frequency deltas to move; changed
relations with their rank and weight; every proof (its timestamp may move) with whether its content changed.
Nothing here touches storage, so both engines detect changes, rank and weigh relations, decode stored documents
and frame the source hash by the same code.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentkb.models.graph.records import EntityRecord, GraphBatch, ProofRecord, RelationRecord, WriteCounts
from agentkb.models.graph.text import canonical_json, entity_terms, normalise_text

TRUST_ORDER = ("authoritative", "corroborated", "observed", "ambiguous")
CONFIDENCE_ORDER = ("high", "medium", "low")
CONFIDENCE_WEIGHT = {"high": 1.0, "medium": 0.6, "low": 0.3}  # a relation's walk weight when it names none
DEFAULT_WEIGHT = 0.5
T = TypeVar("T")
# What a proof stored before the upstream model is taken to say: it was read from an artifact (extracted), by a
# provider nobody vouched for (observed), with no stated confidence (medium).
LEGACY_PROOF_EVIDENCE = {"derivation": "extracted", "trust": "observed", "confidence": "medium", "freshness": "unknown"}
HASH_SECTIONS = ("entities", "proofs", "relations")  # the canonical form's keys, in sorted order


def relation_rank(trust: str, confidence: str) -> int:
    """Sort key of a relation: authoritative/high first."""
    t = TRUST_ORDER.index(trust) if trust in TRUST_ORDER else len(TRUST_ORDER)
    c = CONFIDENCE_ORDER.index(confidence) if confidence in CONFIDENCE_ORDER else len(CONFIDENCE_ORDER)
    return t * 4 + c


def relation_weight(relation: RelationRecord) -> float:
    """The relation's own weight, else the one its confidence implies."""
    if relation.weight is not None:
        return float(relation.weight)
    return CONFIDENCE_WEIGHT.get(relation.confidence, DEFAULT_WEIGHT)


def encode_doc(doc: Mapping[str, Any]) -> str:
    """A public document as stored: compact UTF-8 JSON in the document's own key order."""
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def decode_entity(text: str) -> EntityRecord:
    """The entity stored as `encode_doc(entity.doc())`."""
    doc = json.loads(text)
    identity = doc["identity"]
    return EntityRecord(id=doc["id"], kind=doc["kind"], label=doc["label"], project_id=doc.get("projectId"),
                        identity_key=identity["key"], identity_scope=identity["scope"],
                        aliases=tuple(identity["aliases"]), fingerprint=identity["fingerprint"],
                        attributes=doc["attributes"], proof_ids=tuple(doc["proofIds"]))


def decode_proof(text: str) -> ProofRecord:
    """The proof stored as `encode_doc(proof.doc())`; a proof stored before the upstream model (no derivation,
    trust or confidence) decodes with LEGACY_PROOF_EVIDENCE, which the graph migration then writes back."""
    d = {**LEGACY_PROOF_EVIDENCE, **json.loads(text)}
    return ProofRecord(id=d["id"], provider=d["provider"], artifact=d["artifact"], observed_at=d["observedAt"],
                       derivation=d["derivation"], trust=d["trust"], confidence=d["confidence"],
                       freshness=d["freshness"], content_hash=d.get("contentHash"), pointer=d.get("pointer"),
                       line=d.get("line"), column=d.get("column"), detail=d.get("detail"))


def in_order(ids: Sequence[str], found: Mapping[str, T]) -> list[T]:
    """The found records in the order asked for (missing ids skipped)."""
    return [found[i] for i in ids if i in found]


def entity_names(entity: EntityRecord) -> set[str]:
    """Normalised label, identity key and aliases: what the exact and prefix match tiers compare."""
    return {normalise_text(entity.label), normalise_text(entity.identity_key), *alias_names(entity)}


def alias_names(entity: EntityRecord) -> set[str]:
    return {normalise_text(a) for a in entity.aliases}


def source_hash(entities: Iterable[str], proofs: Iterable[str], relations: Iterable[str]) -> str:
    """sha256 of canonical_json({"entities": [...], "proofs": [...], "relations": [...]}) from item canons in id
    order, streamed: no engine holds the whole graph's canonical text at once. The relations are the proven ones:
    the graph a search runs on (a memory's weighted edges drive recall, never graph search)."""
    digest = hashlib.sha256()
    for n, (name, canons) in enumerate(zip(HASH_SECTIONS, (entities, proofs, relations), strict=True)):
        digest.update((("{" if n == 0 else "],") + f'"{name}":[').encode())
        for i, canon in enumerate(canons):
            digest.update((b"," if i else b"") + canon.encode())
    digest.update(b"]}")
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class PriorGraph:
    """The stored state of a batch's ids: entity id -> (stored doc, canon), relation and proof id -> canon."""

    entities: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    relations: Mapping[str, str] = field(default_factory=dict)
    proofs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EntityChange:
    """A new or changed entity: its stored forms and what it had before (None when new)."""

    entity: EntityRecord
    doc: str
    canon: str
    before: EntityRecord | None
    terms: dict[str, int]

    @property
    def moved(self) -> bool:
        """Its project changed: the project links of its relations need a refresh."""
        return self.before is not None and (self.before.project_id or "") != (self.entity.project_id or "")

    @property
    def dead_terms(self) -> list[str]:
        return list(entity_terms(self.before)) if self.before is not None else []


@dataclass(frozen=True, slots=True)
class RelationChange:
    relation: RelationRecord  # with its weight resolved
    rank: int
    canon: str


@dataclass(frozen=True, slots=True)
class ProofWrite:
    proof: ProofRecord
    doc: str
    canon: str  # timestamp-free: a moved observedAt is stored but changes neither hash nor version
    changed: bool


@dataclass(frozen=True, slots=True)
class GraphChangeSet:
    entities: tuple[EntityChange, ...]
    relations: tuple[RelationChange, ...]
    proofs: tuple[ProofWrite, ...]
    df: dict[str, int]  # term -> change of its document frequency (never 0)
    counts: WriteCounts
    removed: tuple[EntityRecord, ...] = ()  # stored entities to delete, as they were

    @property
    def entity_count_delta(self) -> int:
        return sum(1 for c in self.entities if c.before is None) - len(self.removed)

    @property
    def moved(self) -> set[str]:
        """Entities whose project links may change: moved to another project, or removed."""
        return {c.entity.id for c in self.entities if c.moved} | {e.id for e in self.removed}


def batch_ids(batch: GraphBatch) -> tuple[list[str], list[str], list[str]]:
    """The distinct entity, relation and proof ids of a batch: what an engine reads into PriorGraph."""
    return (list(dict.fromkeys([*(e.id for e in batch.entities), *batch.removed_entities])),
            list(dict.fromkeys(r.id for r in batch.relations)), list(dict.fromkeys(p.id for p in batch.proofs)))


def plan_upsert(batch: GraphBatch, prior: PriorGraph) -> GraphChangeSet:
    """What writing `batch` over `prior` changes (the last copy of a repeated id wins)."""
    latest = {e.id: e for e in batch.entities}
    entities = [_entity_change(e, prior.entities.get(e.id)) for e in latest.values()]
    changed_entities = [c for c in entities if c is not None]
    removed = tuple(decode_entity(prior.entities[i][0]) for i in dict.fromkeys(batch.removed_entities)
                    if i in prior.entities and i not in latest)
    df: Counter[str] = Counter()
    for change in changed_entities:
        df.subtract(change.dead_terms)
        df.update(change.terms.keys())
    for gone in removed:
        df.subtract(entity_terms(gone).keys())
    relations = [_relation_change(r, prior.relations.get(r.id)) for r in {r.id: r for r in batch.relations}.values()]
    changed_relations = sorted((c for c in relations if c is not None), key=lambda c: c.relation.id)
    proofs = tuple(_proof_write(p, prior.proofs.get(p.id)) for p in {p.id: p for p in batch.proofs}.values())
    changed = bool(changed_entities or removed or changed_relations or any(p.changed for p in proofs))
    counts = WriteCounts(len(entities), len(relations), len(proofs), changed)
    return GraphChangeSet(tuple(changed_entities), tuple(changed_relations), proofs,
                          {term: n for term, n in sorted(df.items()) if n}, counts, removed)


def _entity_change(entity: EntityRecord, stored: tuple[str, str] | None) -> EntityChange | None:
    doc = entity.doc()
    canon = canonical_json(doc)
    if stored is not None and stored[1] == canon:
        return None
    before = decode_entity(stored[0]) if stored is not None else None
    return EntityChange(entity, encode_doc(doc), canon, before, entity_terms(entity))


def _relation_change(relation: RelationRecord, stored_canon: str | None) -> RelationChange | None:
    weight = relation_weight(relation)
    canon = canonical_json({**relation.doc(), "weight": weight})
    if stored_canon == canon:
        return None
    resolved = RelationRecord(relation.id, relation.from_id, relation.to_id, relation.kind, relation.derivation,
                              relation.trust, relation.confidence, weight, relation.proof_ids)
    return RelationChange(resolved, relation_rank(relation.trust, relation.confidence), canon)


def _proof_write(proof: ProofRecord, stored_canon: str | None) -> ProofWrite:
    canon = canonical_json(proof.doc(with_timestamp=False))
    return ProofWrite(proof, encode_doc(proof.doc()), canon, stored_canon != canon)
