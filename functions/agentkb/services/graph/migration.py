"""Graphs stored before the upstream model, brought onto it (on open for the embedded engine, `agentkb graph
migrate` on AWS). Idempotent: a migrated graph has nothing left to migrate, and each workspace is one batch.

What changes, and why:
- memory stubs (`mem-<kind>:...` entities a memory created): removed. Their names live on in recall's own entity
  space under the same ids, so every memory link and memory edge keeps working; graph search no longer sees them.
- entities of kinds upstream lacks: re-kinded (person, organization and customer -> owner, repo -> project,
  topic -> document), the old kind kept in `attributes.legacyKind`.
- proven relations of kinds upstream lacks: renamed (reads -> reads-from, writes -> writes-to, maintains -> owns,
  uses -> depends-on, decides -> decided-by with its ends swapped, the rest -> references).
- proofs without derivation, trust and confidence: given LEGACY_PROOF_EVIDENCE (graph_changes).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from agentkb.models.graph.api import ENTITY_KINDS, RELATION_KINDS
from agentkb.models.graph.records import EntityRecord, GraphBatch, RelationRecord
from agentkb.ports.graph import GraphStore
from agentkb.services.graph.changes import decode_entity, decode_proof

LEGACY_ENTITY_KINDS = {"person": "owner", "organization": "owner", "customer": "owner", "repo": "project",
                       "topic": "document"}
LEGACY_RELATION_KINDS = {"reads": "reads-from", "writes": "writes-to", "maintains": "owns", "uses": "depends-on",
                         "decides": "decided-by"}
SWAPPED_RELATION_KINDS = {"decides"}  # `A decides B` is upstream's `B decided-by A`
FALLBACK_RELATION_KIND = "references"
MEMORY_STUB_PREFIX = "mem-"


def is_memory_stub(doc: dict[str, Any]) -> bool:
    """An entity the pre-upstream memory writer created for a name the graph did not hold."""
    return str(doc.get("id", "")).startswith(MEMORY_STUB_PREFIX) and doc.get("attributes", {}).get("origin") == "memory"


def plan_migration(store: GraphStore, workspace_id: str) -> GraphBatch:
    """The one batch that brings a workspace's stored graph onto the upstream model (empty when nothing is left)."""
    entity_docs, relations, proof_docs = store.export(workspace_id)
    removed: list[str] = []
    rekinded: list[EntityRecord] = []
    for text in entity_docs:
        doc = json.loads(text)
        if is_memory_stub(doc):
            removed.append(doc["id"])
        elif doc["kind"] not in ENTITY_KINDS:
            rekinded.append(_rekind(decode_entity(text)))
    proofs = tuple(decode_proof(text) for text in proof_docs if "derivation" not in json.loads(text))
    renamed = tuple(_rename(r) for r in relations if r.proof_ids and r.kind not in RELATION_KINDS)
    return GraphBatch(entities=tuple(_free_identities(store, workspace_id, rekinded)), relations=renamed,
                      proofs=proofs, removed_entities=tuple(removed))


def migrate_graph(store: GraphStore, workspace_ids: Sequence[str] | None = None) -> dict[str, dict[str, int]]:
    """Migrate the given workspaces (default: every workspace the store holds); counts per migrated workspace."""
    report: dict[str, dict[str, int]] = {}
    for ws in workspace_ids if workspace_ids is not None else store.workspaces():
        batch = plan_migration(store, ws)
        if batch.entities or batch.relations or batch.proofs or batch.removed_entities:
            store.upsert(ws, batch)
            report[ws] = {"entities": len(batch.entities), "relations": len(batch.relations),
                          "proofs": len(batch.proofs), "removedMemoryStubs": len(batch.removed_entities)}
    return report


def _rekind(entity: EntityRecord) -> EntityRecord:
    return dataclasses.replace(entity, kind=LEGACY_ENTITY_KINDS.get(entity.kind, "document"),
                               attributes={**entity.attributes, "legacyKind": entity.kind})


def _free_identities(store: GraphStore, ws: str, entities: list[EntityRecord]) -> list[EntityRecord]:
    """A re-kinded entity whose new (kind, project, key) another entity holds keeps its old kind in the key."""
    owners = store.identity_owners(ws, [(e.kind, e.project_id or "", e.identity_key) for e in entities])
    out: list[EntityRecord] = []
    for e in entities:
        holder = owners.get((e.kind, e.project_id or "", e.identity_key))
        clash = holder is not None and holder != e.id
        out.append(dataclasses.replace(e, identity_key=f"{e.identity_key}#{e.attributes['legacyKind']}")
                   if clash else e)
    return out


def _rename(relation: RelationRecord) -> RelationRecord:
    kind = LEGACY_RELATION_KINDS.get(relation.kind, FALLBACK_RELATION_KIND)
    if relation.kind in SWAPPED_RELATION_KINDS:
        return dataclasses.replace(relation, kind=kind, from_id=relation.to_id, to_id=relation.from_id)
    return dataclasses.replace(relation, kind=kind)
