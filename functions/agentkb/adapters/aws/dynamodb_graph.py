"""GraphStore on DynamoDB (graph table, string pk/sk, no secondary index): the same answers as SqliteGraphStore.

Items (`ws` = workspace id; `\\x1f` separates a name from an id; JSON arrays make composite sort keys unambiguous):
  G#<ws>            #META                 version, entity_count, hash, hash_version (source hash cache)
  G#<ws>            E#<id>                entity: doc (public JSON), canon (canonical JSON, hashed)
  G#<ws>            R#<id>                relation: endpoints, trust/confidence/rank, weight, proven, proof_ids, canon
  G#<ws>            P#<id>                proof: doc, canon (timestamp-free)
  G#<ws>            V#<relation id>       the project links a relation created (so a refresh can delete them)
  GID#<ws>          ["kind","project","key"]   entity_id: identity uniqueness (conditional put)
  GN#<ws>           <name_lc>\\x1f<id>     exact/prefix tiers: one item per distinct label / identity key / alias
  GT#<ws>#<term>    #DF                   df: document frequency of the term
  GT#<ws>#<term>    E#<id>                posting: weight, kind, label, project_id (denormalised for ranking)
  GL#<ws>#<project> ["entity","via"]      project link: a workspace entity joined to the project by a proven relation
  GAR#<ws>#<entity> <rank:02d>#<rel id>   adjacency of proven relations (both directions), ordered trust/confidence
                                          rank then id: proven_relations is one Query with Limit = per-entity cap
  GAW#<ws>#<entity> <desc weight>#<rel id>  adjacency of every relation ordered by weight desc then id: neighbours is
                                          one Query (sk < bound of min_weight) with Limit = per-entity cap
A self-loop gets only its outgoing adjacency item (the SQL legs exclude `to = e AND from = e`).

Writes: one upsert reads the stored entities/relations/proofs of the batch (consistent BatchGetItem), derives every
item to put/delete, and writes them with TransactWriteItems. DynamoDB caps a transaction at 100 actions (and
4 MB), so a batch needing more is written as several transactions in a fixed order (identity claims, derived
items, primary items, then the #META version bump): such a batch is NOT atomic on DynamoDB. A crash midway leaves
the primary items (whose canon is what change detection compares) at their old state, so retrying the same batch
rewrites everything; readers may briefly see a partial batch. The embedded engine stays fully atomic.

Reads that are unbounded by nature (term postings of a matching term, name prefixes, neighbourhood totals, the
source hash over the whole graph) are paged Queries over one partition each: the same work as the SQL version.
"""

from __future__ import annotations

import hashlib
import json
import struct
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import partial
from typing import Any

from agentkb.adapters.aws.aws_errors import client_error_code, is_aws_failure, is_conditional_failure, store_failure
from agentkb.adapters.aws.dynamodb_tables import (
    DynamoDbTable,
    get_n,
    get_s,
    get_strings,
    guarded,
    key,
    n,
    query_all,
    s,
    strings,
)
from agentkb.errors import Conflict
from agentkb.models.graph import (
    CONFIDENCE_LEVELS,
    TRUST_LEVELS,
    EntityRecord,
    GraphBatch,
    GraphMatch,
    GraphMatchPage,
    GraphMatchQuery,
    NeighbourhoodTotals,
    ProofRecord,
    RelationRecord,
    WriteCounts,
    canonical_json,
    entity_terms,
    normalise_text,
)

STORE = "graph"
TRANSACTION_LIMIT = 100  # TransactWriteItems actions per call
_TRANSACTION_BYTES = 3_500_000  # stay under the 4 MB aggregate size of a transaction
_CONFIDENCE_WEIGHT = {"high": 1.0, "medium": 0.6, "low": 0.3}
_SEP = "\x1f"
_MASK = (1 << 64) - 1


def relation_rank(trust: str, confidence: str) -> int:
    """Sort key of a relation: authoritative/high first (same as sqlite_graph.relation_rank)."""
    t = TRUST_LEVELS.index(trust) if trust in TRUST_LEVELS else len(TRUST_LEVELS)
    c = CONFIDENCE_LEVELS.index(confidence) if confidence in CONFIDENCE_LEVELS else len(CONFIDENCE_LEVELS)
    return t * 4 + c


def descending_weight(weight: float) -> str:
    """16 hex digits whose string order is the float's descending order (exact: the IEEE bits, no rounding)."""
    bits = struct.unpack(">Q", struct.pack(">d", weight + 0.0))[0]
    bits = (~bits & _MASK) if bits >> 63 else bits | (1 << 63)  # ascending-sortable
    return f"{~bits & _MASK:016x}"


def _entity_from_doc(doc: dict[str, Any]) -> EntityRecord:
    identity = doc["identity"]
    return EntityRecord(id=doc["id"], kind=doc["kind"], label=doc["label"], project_id=doc.get("projectId"),
                        identity_key=identity["key"], identity_scope=identity["scope"],
                        aliases=tuple(identity["aliases"]), fingerprint=identity["fingerprint"],
                        attributes=doc["attributes"], proof_ids=tuple(doc["proofIds"]))


def _relation_from_item(item: dict[str, Any]) -> RelationRecord:
    return RelationRecord(id=get_s(item, "id") or "", from_id=get_s(item, "from_id") or "",
                          to_id=get_s(item, "to_id") or "", kind=get_s(item, "kind") or "",
                          derivation=get_s(item, "derivation") or "", trust=get_s(item, "trust") or "",
                          confidence=get_s(item, "confidence") or "", weight=float(item["weight"]["N"]),
                          proof_ids=get_strings(item, "proof_ids"))


def _names(entity: EntityRecord) -> set[str]:
    return {normalise_text(entity.label), normalise_text(entity.identity_key),
            *(normalise_text(a) for a in entity.aliases)}


def _links(rel: RelationRecord, entity_state: dict[str, EntityRecord | None]) -> list[list[str]]:
    """[project, entity]: a workspace-scope entity joined by a proven relation to an entity of the project."""
    links: list[list[str]] = []
    for ws_end, project_end in ((rel.from_id, rel.to_id), (rel.to_id, rel.from_id)) if rel.proof_ids else ():
        a, b = entity_state.get(ws_end), entity_state.get(project_end)
        if a is not None and b is not None and not a.project_id and b.project_id and [b.project_id, a.id] not in links:
            links.append([b.project_id, a.id])
    return links


def _identity_sk(kind: str, project: str, identity_key: str) -> str:
    return json.dumps([kind, project, identity_key], ensure_ascii=False, separators=(",", ":"))


class DynamoDbGraphStore(DynamoDbTable):
    """GraphStore over the graph table."""

    store = STORE

    # ---- plumbing ----------------------------------------------------------------------------------------

    def _get_many(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
        """Consistent BatchGetItem by (pk, sk), pages of 100, UnprocessedKeys retried."""
        wanted = list(dict.fromkeys(keys))
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for start in range(0, len(wanted), 100):
            pending: dict[str, Any] = {self.table: {"Keys": [key(p, k) for p, k in wanted[start:start + 100]],
                                                    "ConsistentRead": True}}
            for attempt in range(8):
                page = guarded(STORE, partial(self.client.batch_get_item, RequestItems=pending))
                for item in page.get("Responses", {}).get(self.table, []):
                    found[(item["pk"]["S"], item["sk"]["S"])] = item
                pending = page.get("UnprocessedKeys") or {}
                if not pending:
                    break
                time.sleep(0.05 * (2 ** attempt))
            if pending:
                raise store_failure(RuntimeError("unprocessed keys"), store=STORE)
        return found

    def _query(self, pk: str, condition: str = "", values: dict[str, Any] | None = None,
               limit: int | None = None, projection: str | None = None) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk" + (f" AND {condition}" if condition else ""),
                                  "ExpressionAttributeValues": {":pk": s(pk), **(values or {})}}
        if projection:
            kwargs["ProjectionExpression"] = projection
        if limit is None:
            return list(query_all(self.client, STORE, **kwargs))
        items: list[dict[str, Any]] = []  # the cap is applied by DynamoDB (Limit), pages only past 1 MB
        while len(items) < limit:
            kwargs["Limit"] = limit - len(items)
            page = guarded(STORE, partial(self.client.query, **kwargs))
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return items

    def _transact(self, groups: Sequence[dict[tuple[str, str], dict[str, Any]]]) -> None:
        """Write the ops in order, in transactions of <= 100 actions (atomic only when they fit in one)."""
        batch: list[dict[str, Any]] = []
        size = 0
        chunks: list[list[dict[str, Any]]] = []
        for group in groups:
            for op in group.values():
                op_size = len(json.dumps(op))
                if batch and (len(batch) == TRANSACTION_LIMIT or size + op_size > _TRANSACTION_BYTES):
                    chunks.append(batch)
                    batch, size = [], 0
                batch.append(op)
                size += op_size
        if batch:
            chunks.append(batch)
        for chunk in chunks:
            try:
                self.client.transact_write_items(TransactItems=chunk)
            except Exception as exc:
                if is_conditional_failure(exc) and "ConditionalCheckFailed" in str(exc):
                    raise Conflict("An entity with the same kind and identity key already exists") from exc
                if is_aws_failure(exc):
                    raise store_failure(exc, store=STORE) from exc
                raise

    def _put(self, item: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return {"Put": {"TableName": self.table, "Item": item, **extra}}

    def _delete(self, pk: str, sk: str) -> dict[str, Any]:
        return {"Delete": {"TableName": self.table, "Key": key(pk, sk)}}

    # ---- writes ------------------------------------------------------------------------------------------

    def upsert(self, workspace_id: str, batch: GraphBatch) -> WriteCounts:
        ws = workspace_id
        g = f"G#{ws}"
        latest_e = {e.id: e for e in batch.entities}
        latest_r = {r.id: r for r in batch.relations}
        latest_p = {p.id: p for p in batch.proofs}
        old = self._get_many([*((g, f"E#{i}") for i in latest_e), *((g, f"R#{i}") for i in latest_r),
                              *((g, f"P#{i}") for i in latest_p)])
        claims: dict[tuple[str, str], dict[str, Any]] = {}  # identity items first: a clash stops the write early
        derived: dict[tuple[str, str], dict[str, Any]] = {}  # later ops on the same key replace earlier ones
        primary: dict[tuple[str, str], dict[str, Any]] = {}
        added, moved, entity_state = self._entity_ops(ws, latest_e, old, claims, derived, primary)
        changed_rel = self._relation_ops(ws, latest_r, old, derived, primary)

        changed_proofs = 0
        for p in latest_p.values():
            canon = canonical_json(p.doc(with_timestamp=False))
            previous = old.get((g, f"P#{p.id}"))
            changed_proofs += previous is None or get_s(previous, "canon") != canon
            primary[(g, f"P#{p.id}")] = self._put(
                {**key(g, f"P#{p.id}"), "doc": s(json.dumps(p.doc(), ensure_ascii=False, separators=(",", ":"))),
                 "canon": s(canon)})

        self._relink(ws, changed_rel, moved, entity_state, derived)
        changed = bool(primary.keys() - {(g, f"P#{p}") for p in latest_p} or changed_proofs)
        update = "SET version = if_not_exists(version, :zero)" + (" + :one" if changed else "")
        update += ", entity_count = if_not_exists(entity_count, :zero) + :added"
        meta = {(g, "#META"): {"Update": {
            "TableName": self.table, "Key": key(g, "#META"), "UpdateExpression": update,
            "ExpressionAttributeValues": {":zero": n(0), ":added": n(added), **({":one": n(1)} if changed else {})}}}}
        for claimed in claims:  # one action per item and transaction: a re-claimed identity is not also deleted
            derived.pop(claimed, None)
        self._transact([claims, derived, primary, meta])
        return WriteCounts(len(latest_e), len(latest_r), len(latest_p), changed)


    def _entity_ops(self, ws: str, latest_e: dict[str, EntityRecord], old: dict[tuple[str, str], dict[str, Any]],
                    claims: dict[tuple[str, str], dict[str, Any]], derived: dict[tuple[str, str], dict[str, Any]],
                    primary: dict[tuple[str, str], dict[str, Any]]
                    ) -> tuple[int, set[str], dict[str, EntityRecord | None]]:
        """Ops of the changed entities: (how many are new, ids whose project moved, their new state)."""
        df: Counter[str] = Counter()
        added = 0
        moved: set[str] = set()
        entity_state: dict[str, EntityRecord | None] = {}
        g = f"G#{ws}"

        for entity in latest_e.values():
            doc = entity.doc()
            canon = canonical_json(doc)
            previous = old.get((g, f"E#{entity.id}"))
            if previous is not None and get_s(previous, "canon") == canon:
                continue
            entity_state[entity.id] = entity
            project = entity.project_id or ""
            if previous is None:
                added += 1
            else:
                before = _entity_from_doc(json.loads(get_s(previous, "doc") or "{}"))
                for term in entity_terms(before):
                    derived[(f"GT#{ws}#{term}", f"E#{entity.id}")] = self._delete(f"GT#{ws}#{term}", f"E#{entity.id}")
                    df[term] -= 1
                for name in _names(before):
                    derived[(f"GN#{ws}", name + _SEP + entity.id)] = self._delete(f"GN#{ws}", name + _SEP + entity.id)
                old_identity = _identity_sk(before.kind, before.project_id or "", before.identity_key)
                if old_identity != _identity_sk(entity.kind, project, entity.identity_key):
                    derived[(f"GID#{ws}", old_identity)] = self._delete(f"GID#{ws}", old_identity)
                if (before.project_id or "") != project:
                    moved.add(entity.id)
            identity = _identity_sk(entity.kind, project, entity.identity_key)
            claims[(f"GID#{ws}", identity)] = self._put(
                {**key(f"GID#{ws}", identity), "entity_id": s(entity.id)},
                ConditionExpression="attribute_not_exists(pk) OR entity_id = :id",
                ExpressionAttributeValues={":id": s(entity.id)})
            denorm = {"entity_id": s(entity.id), "kind": s(entity.kind), "label": s(entity.label),
                      "project_id": s(project)}
            for name in _names(entity):
                derived[(f"GN#{ws}", name + _SEP + entity.id)] = self._put(
                    {**key(f"GN#{ws}", name + _SEP + entity.id), "name": s(name), **denorm})
            for term, term_weight in entity_terms(entity).items():
                derived[(f"GT#{ws}#{term}", f"E#{entity.id}")] = self._put(
                    {**key(f"GT#{ws}#{term}", f"E#{entity.id}"), "weight": n(term_weight), **denorm})
                df[term] += 1
            primary[(g, f"E#{entity.id}")] = self._put(
                {**key(g, f"E#{entity.id}"), "doc": s(json.dumps(doc, ensure_ascii=False, separators=(",", ":"))),
                 "canon": s(canon)})
        for term, delta in sorted(df.items()):
            if delta:
                derived[(f"GT#{ws}#{term}", "#DF")] = {"Update": {
                    "TableName": self.table, "Key": key(f"GT#{ws}#{term}", "#DF"),
                    "UpdateExpression": "ADD df :d", "ExpressionAttributeValues": {":d": n(delta)}}}

        return added, moved, entity_state

    def _relation_ops(self, ws: str, latest_r: dict[str, RelationRecord], old: dict[tuple[str, str], dict[str, Any]],
                      derived: dict[tuple[str, str], dict[str, Any]],
                      primary: dict[tuple[str, str], dict[str, Any]]) -> dict[str, RelationRecord]:
        """Ops of the changed relations (old adjacency items deleted, new ones put): id -> the relation."""
        g = f"G#{ws}"
        changed_rel: dict[str, RelationRecord] = {}
        for rel in latest_r.values():
            weight = rel.weight if rel.weight is not None else _CONFIDENCE_WEIGHT.get(rel.confidence, 0.5)
            canon = canonical_json({**rel.doc(), "weight": weight})
            previous = old.get((g, f"R#{rel.id}"))
            if previous is not None and get_s(previous, "canon") == canon:
                continue
            if previous is not None:
                for pk, sk in self._adjacency_keys(ws, previous):
                    derived[(pk, sk)] = self._delete(pk, sk)
            rank = relation_rank(rel.trust, rel.confidence)
            fields = {"id": s(rel.id), "from_id": s(rel.from_id), "to_id": s(rel.to_id), "kind": s(rel.kind),
                      "derivation": s(rel.derivation), "trust": s(rel.trust), "confidence": s(rel.confidence),
                      "weight": n(float(weight)), "rank": n(rank), "proven": n(1 if rel.proof_ids else 0),
                      "proof_ids": strings(rel.proof_ids)}
            for pk, sk in self._adjacency_keys(ws, fields):
                derived[(pk, sk)] = self._put({**key(pk, sk), **fields})
            primary[(g, f"R#{rel.id}")] = self._put({**key(g, f"R#{rel.id}"), **fields, "canon": s(canon)})
            changed_rel[rel.id] = RelationRecord(rel.id, rel.from_id, rel.to_id, rel.kind, rel.derivation,
                                                 rel.trust, rel.confidence, float(weight), rel.proof_ids)
        return changed_rel

    @staticmethod
    def _adjacency_keys(ws: str, item: dict[str, Any]) -> list[tuple[str, str]]:
        rid, a, b = item["id"]["S"], item["from_id"]["S"], item["to_id"]["S"]
        ends = [a] if a == b else [a, b]
        out = [(f"GAW#{ws}#{e}", f"{descending_weight(float(item['weight']['N']))}#{rid}") for e in ends]
        if get_n(item, "proven"):
            out += [(f"GAR#{ws}#{e}", f"{get_n(item, 'rank'):02d}#{rid}") for e in ends]
        return out

    def _relink(self, ws: str, changed: dict[str, RelationRecord], moved: set[str],
                entity_state: dict[str, EntityRecord | None],
                ops: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Project links of changed relations and of relations touching entities whose project moved."""
        relations = dict(changed)
        for eid in sorted(moved):
            for item in self._query(f"GAW#{ws}#{eid}"):
                rid = item["id"]["S"]
                relations.setdefault(rid, _relation_from_item(item))
        if not relations:
            return
        g = f"G#{ws}"
        ends = {e for r in relations.values() for e in (r.from_id, r.to_id)} - entity_state.keys()
        stored = self._get_many([(g, f"E#{e}") for e in sorted(ends)])
        for (_pk, sk), item in stored.items():
            entity_state[sk[2:]] = _entity_from_doc(json.loads(get_s(item, "doc") or "{}"))
        vias = self._get_many([(g, f"V#{r}") for r in sorted(relations)])
        for rid, rel in sorted(relations.items()):
            previous = vias.get((g, f"V#{rid}"))
            for project, entity_id in json.loads(get_s(previous, "links") or "[]") if previous else []:
                sk = json.dumps([entity_id, rid], ensure_ascii=False, separators=(",", ":"))
                ops[(f"GL#{ws}#{project}", sk)] = self._delete(f"GL#{ws}#{project}", sk)
            links = _links(rel, entity_state)
            for project, entity_id in links:
                sk = json.dumps([entity_id, rid], ensure_ascii=False, separators=(",", ":"))
                ops[(f"GL#{ws}#{project}", sk)] = self._put(
                    {**key(f"GL#{ws}#{project}", sk), "entity_id": s(entity_id), "via": s(rid)})
            if links:
                ops[(g, f"V#{rid}")] = self._put({**key(g, f"V#{rid}"), "links": s(json.dumps(links))})
            elif previous is not None:
                ops[(g, f"V#{rid}")] = self._delete(g, f"V#{rid}")

    def upsert_entity_by_identity(self, workspace_id: str, entity: EntityRecord) -> str:
        ident = (entity.kind, entity.project_id or "", entity.identity_key)
        existing = self.identity_owners(workspace_id, [ident]).get(ident)
        if existing is not None and existing != entity.id:
            entity = EntityRecord(**{**{f: getattr(entity, f) for f in EntityRecord.__slots__}, "id": existing})
        self.upsert(workspace_id, GraphBatch(entities=(entity,)))
        return entity.id

    # ---- reads -------------------------------------------------------------------------------------------

    def existing_entity_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return {sk[2:] for _pk, sk in self._get_many((f"G#{workspace_id}", f"E#{i}") for i in ids)}

    def existing_proof_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        return {sk[2:] for _pk, sk in self._get_many((f"G#{workspace_id}", f"P#{i}") for i in ids)}

    def identity_owners(self, workspace_id: str,
                        identities: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
        wanted = {_identity_sk(*i): i for i in identities}
        found = self._get_many((f"GID#{workspace_id}", sk) for sk in wanted)
        return {wanted[sk]: get_s(item, "entity_id") or "" for (_pk, sk), item in found.items()}

    def term_statistics(self, workspace_id: str, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        meta = self._get_many([(f"G#{workspace_id}", "#META")]).get((f"G#{workspace_id}", "#META"))
        by_pk = {f"GT#{workspace_id}#{t}": t for t in terms}
        found = self._get_many((pk, "#DF") for pk in by_pk)
        df = {by_pk[pk]: get_n(item, "df") for (pk, _sk), item in found.items()}
        return (get_n(meta, "entity_count") if meta else 0), df

    def _linked(self, query: GraphMatchQuery) -> set[str]:
        if query.project_id is None:
            return set()
        return {get_s(i, "entity_id") or "" for i in self._query(f"GL#{query.workspace_id}#{query.project_id}")}

    @staticmethod
    def _in_scope(query: GraphMatchQuery, item: dict[str, Any], linked: set[str]) -> bool:
        if query.kind is not None and get_s(item, "kind") != query.kind:
            return False
        if query.project_id is not None:
            project = get_s(item, "project_id") or ""
            return project == query.project_id or (project == "" and (get_s(item, "entity_id") or "") in linked)
        return True

    def match_entities(self, query: GraphMatchQuery) -> GraphMatchPage:
        ws = query.workspace_id
        linked = self._linked(query)
        # exact (3) and prefix (2) tiers: one range read of the name items
        if query.text:
            names = self._query(f"GN#{ws}", "begins_with(sk, :t)", {":t": s(query.text)})
        else:
            names = self._query(f"GN#{ws}")
        named: dict[str, tuple[int, str, str]] = {}
        for item in names:
            if not self._in_scope(query, item, linked):
                continue
            eid = get_s(item, "entity_id") or ""
            tier = 3 if get_s(item, "name") == query.text else 2
            if eid not in named or named[eid][0] < tier:
                named[eid] = (tier, get_s(item, "kind") or "", get_s(item, "label") or "")
        scores = self._term_scores(query, list(named)) if named else {}
        limit = query.limit + len(named) if len(named) < query.limit else 0
        top, term_total = self._term_matches(query, linked, limit)
        rows = [(-tier, -scores.get(i, (0, 0))[0], kind, label, i) for i, (tier, kind, label) in named.items()]
        rows += [(-1, -score, kind, label, i) for i, score, kind, label in top if i not in named]
        rows.sort()
        total = term_total + sum(1 for i in named if scores.get(i, (0, 0))[1] == 0)
        return GraphMatchPage(total, tuple(GraphMatch(r[4], -r[0], -r[1]) for r in rows[:query.limit]))

    def _postings(self, ws: str, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """(term, entity id) -> posting weight, for the pairs that have a posting."""
        by_key = {(f"GT#{ws}#{t}", f"E#{e}"): (t, e) for t, e in pairs}
        found = self._get_many(by_key)
        return {by_key[k]: get_n(item, "weight") for k, item in found.items()}

    def _term_scores(self, query: GraphMatchQuery, ids: list[str]) -> dict[str, tuple[int, int]]:
        terms = (*query.matching_terms, *query.boost_terms)
        if not terms:
            return {}
        matching = {t for t, _ in query.matching_terms}
        postings = self._postings(query.workspace_id, [(t, e) for t, _ in terms for e in ids])
        out: dict[str, tuple[int, int]] = {}
        for term, qw in terms:
            for eid in ids:
                weight = postings.get((term, eid))
                if weight is not None:
                    total, hits = out.get(eid, (0, 0))
                    out[eid] = (total + qw * weight + query.coverage_bonus, hits + (term in matching))
        return out

    def _term_matches(self, query: GraphMatchQuery, linked: set[str],
                      limit: int) -> tuple[list[tuple[str, int, str, str]], int]:
        if not query.matching_terms:
            return [], 0
        ws = query.workspace_id
        scored: dict[str, list[Any]] = {}  # id -> [score, kind, label]
        for term, qw in query.matching_terms:
            for item in self._query(f"GT#{ws}#{term}", "begins_with(sk, :e)", {":e": s("E#")}):
                if not self._in_scope(query, item, linked):
                    continue
                eid = item["sk"]["S"][2:]
                row = scored.setdefault(eid, [0, get_s(item, "kind") or "", get_s(item, "label") or ""])
                row[0] += qw * get_n(item, "weight") + query.coverage_bonus
        if not limit:
            return [], len(scored)
        if query.boost_terms:
            postings = self._postings(ws, [(t, e) for t, _ in query.boost_terms for e in scored])
            for (term, eid), weight in postings.items():
                qw = dict(query.boost_terms)[term]
                scored[eid][0] += qw * weight + query.coverage_bonus
        ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[1][1], kv[1][2], kv[0]))[:limit]
        return [(eid, row[0], row[1], row[2]) for eid, row in ranked], len(scored)

    def entities(self, workspace_id: str, ids: Sequence[str]) -> list[EntityRecord]:
        found = self._get_many((f"G#{workspace_id}", f"E#{i}") for i in ids)
        records = {sk[2:]: _entity_from_doc(json.loads(get_s(item, "doc") or "{}"))
                   for (_pk, sk), item in found.items()}
        return [records[i] for i in ids if i in records]

    def proofs(self, workspace_id: str, ids: Sequence[str]) -> list[ProofRecord]:
        found = self._get_many((f"G#{workspace_id}", f"P#{i}") for i in ids)
        records: dict[str, ProofRecord] = {}
        for item in found.values():
            d = json.loads(get_s(item, "doc") or "{}")
            records[d["id"]] = ProofRecord(id=d["id"], provider=d["provider"], artifact=d["artifact"],
                                           content_hash=d["contentHash"], observed_at=d["observedAt"],
                                           freshness=d["freshness"], pointer=d.get("pointer"),
                                           line=d.get("line"), column=d.get("column"))
        return [records[i] for i in ids if i in records]

    def proven_relations(self, workspace_id: str, entity_ids: Sequence[str],
                         per_entity_cap: int) -> dict[str, list[RelationRecord]]:
        return {eid: [_relation_from_item(i) for i in self._query(f"GAR#{workspace_id}#{eid}", limit=per_entity_cap)]
                if per_entity_cap > 0 else [] for eid in dict.fromkeys(entity_ids)}

    def neighbourhood_totals(self, workspace_id: str, entity_ids: Sequence[str]) -> NeighbourhoodTotals:
        ids = set(entity_ids)
        relations = 0
        related: set[str] = set()
        for eid in dict.fromkeys(entity_ids):
            for item in self._query(f"GAR#{workspace_id}#{eid}", projection="from_id, to_id"):
                a, b = item["from_id"]["S"], item["to_id"]["S"]
                if a == eid:  # outgoing: always counted
                    relations += 1
                    if b not in ids:
                        related.add(b)
                elif a not in ids:  # incoming from outside the set
                    relations += 1
                    related.add(a)
        return NeighbourhoodTotals(relations, len(related))

    def neighbours(self, workspace_id: str, entity_ids: Sequence[str], min_weight: float,
                   per_entity_cap: int) -> list[tuple[str, str, str, float]]:
        if per_entity_cap <= 0:
            return []
        bound = s(descending_weight(float(min_weight)) + "$")  # "$" sorts right after the "#" separator
        out: list[tuple[str, str, str, float]] = []
        for eid in dict.fromkeys(entity_ids):
            for item in self._query(f"GAW#{workspace_id}#{eid}", "sk < :b", {":b": bound}, limit=per_entity_cap):
                out.append((item["from_id"]["S"], item["to_id"]["S"], item["kind"]["S"], float(item["weight"]["N"])))
        return out

    def source_hash(self, workspace_id: str) -> str:
        g = f"G#{workspace_id}"
        for _attempt in range(5):
            meta = self._get_many([(g, "#META")]).get((g, "#META"))
            version = get_n(meta, "version") if meta else 0
            if meta is not None and "hash" in meta and get_n(meta, "hash_version", -1) == version:
                return get_s(meta, "hash") or ""
            digest = self._compute_hash(g)
            after = self._get_many([(g, "#META")]).get((g, "#META"))
            if (get_n(after, "version") if after else 0) != version:
                continue  # a write landed while hashing: hash the new version
            if meta is not None:
                try:
                    self.client.update_item(
                        TableName=self.table, Key=key(g, "#META"),
                        UpdateExpression="SET #h = :h, hash_version = :v", ConditionExpression="version = :v",
                        ExpressionAttributeNames={"#h": "hash"},
                        ExpressionAttributeValues={":h": s(digest), ":v": n(version)})
                except Exception as exc:  # best effort: a refused cache write still serves the hash
                    if client_error_code(exc) is None and not hasattr(exc, "response"):
                        raise
            return digest
        return self._compute_hash(g)

    def _compute_hash(self, g: str) -> str:
        """sha256 of canonical_json({"entities": [...], "proofs": [...], "relations": [...]}), items by id."""
        digest = hashlib.sha256()
        for i, (name, prefix) in enumerate((("entities", "E#"), ("proofs", "P#"), ("relations", "R#"))):
            digest.update((("{" if i == 0 else "],") + f'"{name}":[').encode())
            canons = sorted((item["sk"]["S"][2:], get_s(item, "canon") or "") for item in self._query(
                g, "begins_with(sk, :p)", {":p": s(prefix)}, projection="sk, canon"))
            digest.update(",".join(c for _i, c in canons).encode())
        digest.update(b"]}")
        return digest.hexdigest()
