"""Writes of the DynamoDB graph: read the batch's stored items, plan the change set, write its items.

The ops go out as TransactWriteItems in a fixed order (identity claims, derived items, primary items, #META); see
store.py for what that means for batches larger than one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentkb.adapters.aws.dynamodb.graph.base import (
    SEP,
    DynamoDbGraphTable,
    Ops,
    adjacency_keys,
    identity_sk,
    relation_from_item,
)
from agentkb.adapters.aws.dynamodb.tables import get_s, key, n, s, strings
from agentkb.models.graph.records import EntityRecord, GraphBatch, RelationRecord, WriteCounts
from agentkb.models.graph.text import entity_terms
from agentkb.services.graph.changes import (
    EntityChange,
    GraphChangeSet,
    PriorGraph,
    batch_ids,
    decode_entity,
    entity_names,
    plan_upsert,
)

Items = Mapping[tuple[str, str], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class DynamoDbGraphWriter:
    """GraphStore.upsert over the graph table."""

    db: DynamoDbGraphTable

    def upsert(self, workspace_id: str, batch: GraphBatch) -> WriteCounts:
        ws, g = workspace_id, f"G#{workspace_id}"
        entity_ids, relation_ids, proof_ids = batch_ids(batch)
        old = self.db.get_many([*((g, f"E#{i}") for i in entity_ids), *((g, f"R#{i}") for i in relation_ids),
                                *((g, f"P#{i}") for i in proof_ids)])
        stored = {sk: item for (_pk, sk), item in old.items()}
        changes = plan_upsert(batch, PriorGraph(
            entities={i: (get_s(stored[f"E#{i}"], "doc") or "{}", get_s(stored[f"E#{i}"], "canon") or "")
                      for i in entity_ids if f"E#{i}" in stored},
            relations={i: get_s(stored[f"R#{i}"], "canon") or "" for i in relation_ids if f"R#{i}" in stored},
            proofs={i: get_s(stored[f"P#{i}"], "canon") or "" for i in proof_ids if f"P#{i}" in stored}))
        claims: Ops = {}  # identity items first: a clash stops the write early
        derived: Ops = {}
        primary: Ops = {}
        for change in changes.entities:
            self._entity_ops(ws, change, claims, derived, primary)
        for gone in changes.removed:
            self._removal_ops(ws, gone, derived, primary)
        self._df_ops(ws, changes, derived)
        self._relation_ops(ws, changes, stored, derived, primary)
        for p in changes.proofs:
            primary[(g, f"P#{p.proof.id}")] = self.db.put_op({**key(g, f"P#{p.proof.id}"), "doc": s(p.doc),
                                                             "canon": s(p.canon)})
        entity_state: dict[str, EntityRecord | None] = {c.entity.id: c.entity for c in changes.entities}
        entity_state.update(dict.fromkeys((e.id for e in changes.removed), None))
        relations = {c.relation.id: c.relation for c in changes.relations}
        self._relink(ws, relations, changes.moved, entity_state, derived)
        for claimed in claims:  # one action per item and transaction: a re-claimed identity is not also deleted
            derived.pop(claimed, None)
        self.db.write([claims, derived, primary, self._meta_op(g, changes)])
        return changes.counts

    def _meta_op(self, g: str, changes: GraphChangeSet) -> Ops:
        changed = changes.counts.changed
        update = "SET version = if_not_exists(version, :zero)" + (" + :one" if changed else "")
        update += ", entity_count = if_not_exists(entity_count, :zero) + :added"
        values = {":zero": n(0), ":added": n(changes.entity_count_delta), **({":one": n(1)} if changed else {})}
        return {(g, "#META"): {"Update": {"TableName": self.db.table, "Key": key(g, "#META"),
                                          "UpdateExpression": update, "ExpressionAttributeValues": values}}}

    def _index_deletes(self, ws: str, before: EntityRecord, derived: Ops) -> None:
        """Delete the postings, names and identity claim an entity had (puts of the new state replace them)."""
        for term in entity_terms(before):
            derived[(f"GT#{ws}#{term}", f"E#{before.id}")] = self.db.delete_op(f"GT#{ws}#{term}", f"E#{before.id}")
        for name in entity_names(before):
            derived[(f"GN#{ws}", name + SEP + before.id)] = self.db.delete_op(f"GN#{ws}", name + SEP + before.id)
        old_identity = identity_sk(before.kind, before.project_id or "", before.identity_key)
        derived[(f"GID#{ws}", old_identity)] = self.db.delete_op(f"GID#{ws}", old_identity)

    def _removal_ops(self, ws: str, gone: EntityRecord, derived: Ops, primary: Ops) -> None:
        self._index_deletes(ws, gone, derived)
        primary[(f"G#{ws}", f"E#{gone.id}")] = self.db.delete_op(f"G#{ws}", f"E#{gone.id}")

    def _entity_ops(self, ws: str, change: EntityChange, claims: Ops, derived: Ops, primary: Ops) -> None:
        entity = change.entity
        project = entity.project_id or ""
        identity = identity_sk(entity.kind, project, entity.identity_key)
        if change.before is not None:
            self._index_deletes(ws, change.before, derived)
        claims[(f"GID#{ws}", identity)] = self.db.put_op(
            {**key(f"GID#{ws}", identity), "entity_id": s(entity.id)},
            ConditionExpression="attribute_not_exists(pk) OR entity_id = :id",
            ExpressionAttributeValues={":id": s(entity.id)})
        denorm = {"entity_id": s(entity.id), "kind": s(entity.kind), "label": s(entity.label),
                  "project_id": s(project)}
        for name in entity_names(entity):
            derived[(f"GN#{ws}", name + SEP + entity.id)] = self.db.put_op(
                {**key(f"GN#{ws}", name + SEP + entity.id), "name": s(name), **denorm})
        for term, term_weight in change.terms.items():
            derived[(f"GT#{ws}#{term}", f"E#{entity.id}")] = self.db.put_op(
                {**key(f"GT#{ws}#{term}", f"E#{entity.id}"), "weight": n(term_weight), **denorm})
        g = f"G#{ws}"
        primary[(g, f"E#{entity.id}")] = self.db.put_op({**key(g, f"E#{entity.id}"), "doc": s(change.doc),
                                                        "canon": s(change.canon)})

    def _df_ops(self, ws: str, changes: GraphChangeSet, derived: Ops) -> None:
        for term, delta in changes.df.items():
            derived[(f"GT#{ws}#{term}", "#DF")] = {"Update": {
                "TableName": self.db.table, "Key": key(f"GT#{ws}#{term}", "#DF"),
                "UpdateExpression": "ADD df :d", "ExpressionAttributeValues": {":d": n(delta)}}}

    def _relation_ops(self, ws: str, changes: GraphChangeSet, stored: Mapping[str, dict[str, Any]],
                      derived: Ops, primary: Ops) -> None:
        """Old adjacency items deleted, new ones put, the primary item replaced."""
        g = f"G#{ws}"
        for change in changes.relations:
            rel = change.relation
            previous = stored.get(f"R#{rel.id}")
            if previous is not None:
                for pk, sk in adjacency_keys(ws, previous):
                    derived[(pk, sk)] = self.db.delete_op(pk, sk)
            fields = {"id": s(rel.id), "from_id": s(rel.from_id), "to_id": s(rel.to_id), "kind": s(rel.kind),
                      "derivation": s(rel.derivation), "trust": s(rel.trust), "confidence": s(rel.confidence),
                      "weight": n(float(rel.weight or 0.0)), "rank": n(change.rank),
                      "proven": n(1 if rel.proof_ids else 0), "proof_ids": strings(rel.proof_ids)}
            for pk, sk in adjacency_keys(ws, fields):
                derived[(pk, sk)] = self.db.put_op({**key(pk, sk), **fields})
            primary[(g, f"R#{rel.id}")] = self.db.put_op({**key(g, f"R#{rel.id}"), **fields, "canon": s(change.canon)})

    def _relink(self, ws: str, changed: dict[str, RelationRecord], moved: set[str],
                entity_state: dict[str, EntityRecord | None], ops: Ops) -> None:
        """Project links of changed relations and of relations touching entities whose project moved."""
        relations = dict(changed)
        for eid in sorted(moved):
            for item in self.db.partition(f"GAW#{ws}#{eid}"):
                relations.setdefault(item["id"]["S"], relation_from_item(item))
        if not relations:
            return
        g = f"G#{ws}"
        ends = {e for r in relations.values() for e in (r.from_id, r.to_id)} - entity_state.keys()
        for (_pk, sk), item in self.db.get_many([(g, f"E#{e}") for e in sorted(ends)]).items():
            entity_state[sk[2:]] = decode_entity(get_s(item, "doc") or "{}")
        vias = self.db.get_many([(g, f"V#{r}") for r in sorted(relations)])
        for rid, rel in sorted(relations.items()):
            previous = vias.get((g, f"V#{rid}"))
            for project, entity_id in json.loads(get_s(previous, "links") or "[]") if previous else []:
                sk = json.dumps([entity_id, rid], ensure_ascii=False, separators=(",", ":"))
                ops[(f"GL#{ws}#{project}", sk)] = self.db.delete_op(f"GL#{ws}#{project}", sk)
            links = _links(rel, entity_state)
            for project, entity_id in links:
                sk = json.dumps([entity_id, rid], ensure_ascii=False, separators=(",", ":"))
                ops[(f"GL#{ws}#{project}", sk)] = self.db.put_op(
                    {**key(f"GL#{ws}#{project}", sk), "entity_id": s(entity_id), "via": s(rid)})
            if links:
                ops[(g, f"V#{rid}")] = self.db.put_op({**key(g, f"V#{rid}"), "links": s(json.dumps(links))})
            elif previous is not None:
                ops[(g, f"V#{rid}")] = self.db.delete_op(g, f"V#{rid}")


def _links(rel: RelationRecord, entity_state: dict[str, EntityRecord | None]) -> list[list[str]]:
    """[project, entity]: a workspace-scope entity joined by a proven relation to an entity of the project."""
    links: list[list[str]] = []
    for ws_end, project_end in ((rel.from_id, rel.to_id), (rel.to_id, rel.from_id)) if rel.proof_ids else ():
        a, b = entity_state.get(ws_end), entity_state.get(project_end)
        if a is not None and b is not None and not a.project_id and b.project_id and [b.project_id, a.id] not in links:
            links.append([b.project_id, a.id])
    return links
