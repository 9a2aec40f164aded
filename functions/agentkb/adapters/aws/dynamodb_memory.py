"""MemoryStore on DynamoDB (memory table, string pk/sk): DynamoDB is the source of truth, read-after-write is immediate.

Items (`ws` = workspace id, `<id>` = the memory id zero-padded to 12 digits so sort order is id order):
  MSEQ              #SEQ              next: the global memory id counter (ADD, like SQLite's INTEGER PRIMARY KEY)
  MW#<ws>           #META             dim: the workspace's vector dimension
  MW#<ws>           M#<id>            the revision: every field, text (name/description/body) and the facets below
  MW#<ws>           V#<id>            the vector leg: facets + embedding (B, float32 little-endian)
  MW#<ws>           N#<name>          memory_id, revision of the live revision: name uniqueness (conditional put)
  MW#<ws>           I#["principal","key"]  body_hash, memory_id: idempotency (attribute_not_exists)
  MW#<ws>           P#~<id>           unindexed: written with the memory when an index is attached (track_index),
                                      deleted once the OpenSearch memory index accepted the document
  MW#<ws>           P#<ms>#<id>       indexed at <ms> (epoch ms, 13 digits): pending until the index shows it; ttl
  ME#<ws>#<entity>  <id>              a memory <-> entity link
Facets (eligibility): vis_rank, project_id, channel_id, owner_id (absent = NULL), sensitivity, confirmed, stale,
superseded (0/1), valid_until (absent = open-ended), updated_at.

Eligibility is `eligibility_sql`'s WHERE clause as a DynamoDB FilterExpression (`eligibility_filter`), applied
inside the Query before anything is ranked (sensitivity bits become `sensitivity IN (allowed values)`).

Scale limit when this store ranks alone (no OpenSearch endpoint): the vector leg is an exact cosine in plain Python
(no numpy in the AWS bundle) over every eligible `V#` item of the workspace, read with one paged Query per recall.
That is fine to ~10k memories per workspace (a 1024-d vector is ~4 KB: 10k memories read ~40 MB worth of RCUs /
several hundred ms); beyond, indexed_memory.IndexedMemoryStore asks the OpenSearch memory index for candidates and
keeps this store as the source of truth.

Lexical leg: not BM25. A term-match score over the eligible `M#` items: for each distinct query term (the same
words and stopwords as the embedded FTS query, no stemming), idf * (2.0 tf(name) + 1.5 tf(description) +
1.0 tf(body)), idf = ln(1 + (N - df + 0.5) / (df + 0.5)) over the eligible set. It finds the same memories as the
embedded FTS5 leg for whole-word matches; ranks may differ (no length normalisation, no porter stemming).

Writes: `insert` writes the entity links first (a link to a not-yet-committed id is invisible: every read
intersects with eligible items), then one TransactWriteItems: the record, its vector item, the live-name claim
(conditional on the name's current owner), the previous revision's `superseded` flag and the idempotency record.
`insert_many` is a bulk load with BatchWriteItem: not atomic on DynamoDB (25 items per request).

With the OpenSearch memory legs (indexed_memory.py) this store stays the source of truth: it writes the `P#`
markers those legs read (one key range per recall) and re-checks every index candidate (`is_eligible` over
consistent reads, exactly `eligibility_filter`'s rules).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import Any

from agentkb.adapters.aws.aws_errors import is_conditional_failure, store_failure
from agentkb.adapters.aws.dynamodb_memory_match import (
    cosine32,
    eligibility_filter,
    float32,
    is_eligible,
    number,
    pack,
    query_terms,
    rank_by_cosine,
    term_match,
)
from agentkb.adapters.aws.dynamodb_tables import (
    DynamoDbTable,
    batch_get,
    batch_write,
    get_n,
    get_s,
    guarded,
    key,
    n,
    query_all,
    s,
)
from agentkb.errors import Conflict
from agentkb.models.memory import VISIBILITY_RANK, IdempotencyRecord, MemoryRecord, StoredMemory
from agentkb.models.recall import MemoryView, RecallScope

STORE = "memory"
MARKER_TTL_S = 86_400  # an indexed marker outlives the refresh lag by far; DynamoDB TTL removes it (`ttl`)
def _mid(memory_id: int) -> str:
    return f"{memory_id:012d}"


class DynamoDbMemoryStore(DynamoDbTable):
    """MemoryStore port on the memory table. `track_index`: write the unindexed marker with every memory."""

    store = STORE

    def __init__(self, client: Any, table: str, *, track_index: bool = False) -> None:
        super().__init__(client, table)
        self.track_index = track_index

    # -- plumbing -----------------------------------------------------------------------------------------------

    def _records(self, ws: str, ids: Sequence[int], prefix: str = "M#") -> dict[int, dict[str, Any]]:
        keys = [key(f"MW#{ws}", prefix + _mid(i)) for i in dict.fromkeys(ids)]
        return {get_n(item, "memory_id"): item for item in batch_get(self.client, STORE, self.table, keys)}

    def _eligible(self, scope: RecallScope, prefix: str, projection: str | None = None) -> list[dict[str, Any]]:
        where, values = eligibility_filter(scope)
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
                                  "FilterExpression": where,
                                  "ExpressionAttributeValues": {":pk": s(f"MW#{scope.workspace_id}"),
                                                                ":prefix": s(prefix), **values}}
        if projection:
            kwargs["ProjectionExpression"] = projection
            if "#n" in projection:
                kwargs["ExpressionAttributeNames"] = {"#n": "name"}
        return list(query_all(self.client, STORE, **kwargs))

    @staticmethod
    def _summary(item: dict[str, Any]) -> StoredMemory:
        memory_id = get_n(item, "memory_id")
        supersedes = get_n(item, "supersedes", -1)
        response = {"memory_id": memory_id, "name": get_s(item, "name"), "revision": get_n(item, "revision"),
                    "workspace_id": get_s(item, "workspace_id"), "project_id": get_s(item, "project_id"),
                    "type": get_s(item, "type"), "visibility": get_s(item, "visibility"),
                    "supersedes": None if supersedes < 0 else supersedes,
                    "entity_ids": json.loads(get_s(item, "entity_ids") or "[]"),
                    "relation_count": get_n(item, "relation_count"), "created_at": get_s(item, "created_at")}
        return StoredMemory(memory_id, get_s(item, "name") or "", get_n(item, "revision"),
                            get_s(item, "request_hash") or "", response)

    def _allocate(self, count: int) -> int:
        """The first of `count` fresh memory ids."""
        out = guarded(STORE, lambda: self.client.update_item(
            TableName=self.table, Key=key("MSEQ", "#SEQ"), UpdateExpression="ADD #next :c",
            ExpressionAttributeNames={"#next": "next"}, ExpressionAttributeValues={":c": n(count)},
            ReturnValues="UPDATED_NEW"))
        return int(out["Attributes"]["next"]["N"]) - count + 1

    def _items(self, r: MemoryRecord, memory_id: int, revision: int,
               supersedes: int | None) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
        """(the M# record, the V# vector item, the link items) of one revision."""
        facets: dict[str, Any] = {"memory_id": n(memory_id), "vis_rank": n(VISIBILITY_RANK[r.visibility]),
                                  "sensitivity": n(r.sensitivity), "confirmed": n(int(r.confirmed)),
                                  "stale": n(int(r.stale)), "superseded": n(0), "updated_at": n(float(r.updated_at))}
        for name, value in (("project_id", r.project_id), ("channel_id", r.channel_id), ("owner_id", r.owner_id)):
            if value is not None:
                facets[name] = s(value)
        if r.valid_until is not None:
            facets["valid_until"] = n(float(r.valid_until))
        ws = f"MW#{r.workspace_id}"
        record = {**key(ws, "M#" + _mid(memory_id)), **facets, "workspace_id": s(r.workspace_id),
                  "visibility": s(r.visibility), "type": s(r.type), "name": s(r.name),
                  "description": s(r.description), "body": s(r.body), "revision": n(revision),
                  "request_hash": s(r.request_hash), "created_at": s(r.created_at),
                  "entity_ids": s(json.dumps(list(r.entity_ids))), "relation_count": n(r.relation_count)}
        if supersedes is not None:
            record["supersedes"] = n(supersedes)
        if r.source is not None:
            record["source"] = s(r.source)
        vector = {**key(ws, "V#" + _mid(memory_id)), **facets, "embedding": {"B": pack(r.embedding)}}
        links = [{**key(f"ME#{r.workspace_id}#{e}", _mid(memory_id)), "memory_id": n(memory_id)}
                 for e in dict.fromkeys(r.entity_ids)]
        return record, vector, links

    def _meta(self, r: MemoryRecord) -> dict[str, Any]:
        return {"TableName": self.table, "Key": key(f"MW#{r.workspace_id}", "#META"),
                "UpdateExpression": "SET dim = if_not_exists(dim, :d)",
                "ExpressionAttributeValues": {":d": n(len(r.embedding))}}

    # -- writes -------------------------------------------------------------------------------------------------
    def find_live(self, workspace_id: str, name: str) -> StoredMemory | None:
        pointer = self._get(f"MW#{workspace_id}", f"N#{name}")
        if pointer is None:
            return None
        item = self._get(f"MW#{workspace_id}", "M#" + _mid(get_n(pointer, "memory_id")))
        return self._summary(item) if item else None

    @staticmethod
    def _idem_sk(idem_principal: str, idem_key: str) -> str:
        return "I#" + json.dumps([idem_principal, idem_key], ensure_ascii=False, separators=(",", ":"))

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        record = self._get(f"MW#{workspace_id}", self._idem_sk(principal, key))
        if record is None:
            return None
        item = self._get(f"MW#{workspace_id}", "M#" + _mid(get_n(record, "memory_id")))
        return (get_s(record, "body_hash") or "", self._summary(item)) if item else None

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        ws = f"MW#{record.workspace_id}"
        if idempotency is not None and self._get(ws, self._idem_sk(idempotency.principal, idempotency.key)):
            raise Conflict("This idempotency key was already used")
        pointer = self._get(ws, f"N#{record.name}")
        previous = get_n(pointer, "memory_id") if pointer else None
        revision = get_n(pointer, "revision") + 1 if pointer else 1
        memory_id = self._allocate(1)
        item, vector, links = self._items(record, memory_id, revision, previous)
        batch_write(self.client, STORE, self.table, [{"PutRequest": {"Item": link}} for link in links])
        claim: dict[str, Any] = {"Put": {"TableName": self.table, "Item": {
            **key(ws, f"N#{record.name}"), "memory_id": n(memory_id), "revision": n(revision)}}}
        if previous is None:
            claim["Put"]["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            claim["Put"]["ConditionExpression"] = "memory_id = :prev"
            claim["Put"]["ExpressionAttributeValues"] = {":prev": n(previous)}
        actions: list[dict[str, Any]] = [claim, {"Put": {"TableName": self.table, "Item": item}},
                                         {"Put": {"TableName": self.table, "Item": vector}},
                                         {"Update": self._meta(record)}]
        if previous is not None:
            actions += [{"Update": {"TableName": self.table, "Key": key(ws, prefix + _mid(previous)),
                                    "UpdateExpression": "SET superseded = :one",
                                    "ExpressionAttributeValues": {":one": n(1)}}} for prefix in ("M#", "V#")]
        if self.track_index:
            actions.append({"Put": {"TableName": self.table, "Item": self._unindexed(record.workspace_id, memory_id)}})
        if idempotency is not None:
            actions.append({"Put": {"TableName": self.table, "ConditionExpression": "attribute_not_exists(pk)",
                                    "Item": {**key(ws, self._idem_sk(idempotency.principal, idempotency.key)),
                                             "body_hash": s(idempotency.body_hash), "memory_id": n(memory_id)}}})
        try:
            self.client.transact_write_items(TransactItems=actions)
        except Exception as exc:
            if is_conditional_failure(exc):
                raise Conflict("A concurrent write to the same memory name or idempotency key won; retry") from exc
            raise store_failure(exc, store=STORE) from exc
        return self._summary(item)

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Bulk load of new names: BatchWriteItem, not atomic on DynamoDB (the embedded engine is)."""
        if not records:
            return []
        first = self._allocate(len(records))
        requests: list[dict[str, Any]] = []
        metas: dict[str, MemoryRecord] = {}
        for offset, r in enumerate(records):
            item, vector, links = self._items(r, first + offset, 1, None)
            pointer = {**key(f"MW#{r.workspace_id}", f"N#{r.name}"), "memory_id": n(first + offset),
                       "revision": n(1)}
            marker = [self._unindexed(r.workspace_id, first + offset)] if self.track_index else []
            requests += [{"PutRequest": {"Item": i}} for i in (*links, *marker, item, vector, pointer)]
            metas.setdefault(r.workspace_id, r)
        batch_write(self.client, STORE, self.table, requests)
        for r in metas.values():
            guarded(STORE, lambda r=r: self.client.update_item(**self._meta(r)))  # type: ignore[misc]
        return list(range(first, first + len(records)))

    # -- vectors ------------------------------------------------------------------------------------------------
    def vector_dimension(self, workspace_id: str) -> int | None:
        meta = self._get(f"MW#{workspace_id}", "#META")
        return get_n(meta, "dim") if meta and "dim" in meta else None

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      lifted: Collection[int] = (), lift: float = 0.0) -> list[tuple[int, float]]:
        """Exact cosine (dot product of L2-normalised vectors) over the eligible V# items, best first, then id."""
        items = ((get_n(item, "memory_id"), item)
                 for item in self._eligible(scope, "V#", projection="memory_id, embedding"))
        return rank_by_cosine(items, vector, k, set(lifted) if lift else (), lift)

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        query32 = float32(vector)
        return {memory_id: cosine32(item, query32)
                for memory_id, item in self._records(workspace_id, memory_ids, "V#").items()}

    # -- lexical, links, views ----------------------------------------------------------------------------------
    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        terms = query_terms(text)
        if not terms:
            return []
        docs = [(get_n(item, "memory_id"), item)
                for item in self._eligible(scope, "M#", projection="memory_id, #n, description, body")]
        return term_match(docs, terms)[:max(k, 0)]

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for memory_id, item in sorted(self._records(workspace_id, memory_ids).items()):
            entities = sorted(set(json.loads(get_s(item, "entity_ids") or "[]")))
            if entities:
                out[memory_id] = entities
        return out

    def linked_memories(self, scope: RecallScope, entity_ids: Sequence[str],
                        per_entity_cap: int) -> list[tuple[int, str]]:
        """Eligible linked memories, newest (updated_at, then id) first, at most `per_entity_cap` per entity.

        Reads each entity's links, then the linked V# items (consistent) and checks them with is_eligible: the cost
        follows the entities' degree, never the workspace's size.
        """
        links: dict[str, list[int]] = {}
        for entity_id in dict.fromkeys(entity_ids):
            links[entity_id] = [get_n(i, "memory_id") for i in query_all(
                self.client, STORE, TableName=self.table, ConsistentRead=True, ProjectionExpression="memory_id",
                KeyConditionExpression="pk = :pk", ExpressionAttributeValues={
                    ":pk": s(f"ME#{scope.workspace_id}#{entity_id}")})]
        items = self.items(scope.workspace_id, [m for ids in links.values() for m in ids], "V#")
        updated = {m: number(i, "updated_at") for m, i in items.items() if is_eligible(i, scope)}
        out: list[tuple[int, str]] = []
        for entity_id, linked in links.items():
            ranked = sorted((m for m in linked if m in updated), key=lambda m: (-updated[m], -m))
            out += [(m, entity_id) for m in ranked[:per_entity_cap]]
        return out

    def views(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryView]:
        return {memory_id: MemoryView(memory_id, get_s(item, "name") or "",
                                      get_s(item, "project_id") or get_s(item, "workspace_id") or "",
                                      get_s(item, "type") or "", get_s(item, "description") or "",
                                      (get_s(item, "body") or "")[:200])
                for memory_id, item in self._records(workspace_id, memory_ids).items()}

    # -- the OpenSearch memory legs' bookkeeping (indexed_memory.py) ----------------------------------------------
    @staticmethod
    def _unindexed(workspace_id: str, memory_id: int) -> dict[str, Any]:
        return {**key(f"MW#{workspace_id}", "P#~" + _mid(memory_id)), "memory_id": n(memory_id)}

    def items(self, workspace_id: str, memory_ids: Sequence[int], prefix: str) -> dict[int, dict[str, Any]]:
        """Consistent reads of the M# (record) or V# (vector + facets) items: the truth index hits are checked on."""
        keys = [key(f"MW#{workspace_id}", prefix + _mid(i)) for i in dict.fromkeys(memory_ids)]
        return {get_n(item, "memory_id"): item
                for item in batch_get(self.client, STORE, self.table, keys, consistent=True)}

    def pending(self, workspace_id: str, indexed_since: float) -> set[int]:
        """Memories the index may not show yet: unindexed ones, and those indexed at or after `indexed_since`."""
        low = f"P#{int(indexed_since * 1000):013d}"
        return {get_n(i, "memory_id") for i in query_all(
            self.client, STORE, TableName=self.table, ConsistentRead=True, ProjectionExpression="memory_id",
            KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
            ExpressionAttributeValues={":pk": s(f"MW#{workspace_id}"), ":low": s(low), ":high": s("P#~~")})}

    def unindexed(self, workspace_id: str, limit: int | None = None) -> list[int]:
        """Memories whose index write has not succeeded yet (oldest id first)."""
        kwargs: dict[str, Any] = {"TableName": self.table, "ConsistentRead": True,
                                  "KeyConditionExpression": "pk = :pk AND begins_with(sk, :p)",
                                  "ExpressionAttributeValues": {":pk": s(f"MW#{workspace_id}"), ":p": s("P#~")}}
        if limit is not None:
            kwargs["Limit"] = limit
            page = guarded(STORE, lambda: self.client.query(**kwargs))
            return [get_n(i, "memory_id") for i in page.get("Items", [])]
        return [get_n(i, "memory_id") for i in query_all(self.client, STORE, **kwargs)]

    def mark_unindexed(self, workspace_id: str, memory_ids: Sequence[int]) -> None:
        batch_write(self.client, STORE, self.table,
                    [{"PutRequest": {"Item": self._unindexed(workspace_id, i)}} for i in dict.fromkeys(memory_ids)])

    def mark_indexed(self, workspace_id: str, memory_ids: Sequence[int], now: float) -> None:
        """The index accepted these documents at `now`: pending for the refresh lag, then gone (TTL)."""
        ms = f"{int(now * 1000):013d}"
        requests: list[dict[str, Any]] = []
        for memory_id in dict.fromkeys(memory_ids):
            requests.append({"DeleteRequest": {"Key": key(f"MW#{workspace_id}", "P#~" + _mid(memory_id))}})
            requests.append({"PutRequest": {"Item": {
                **key(f"MW#{workspace_id}", f"P#{ms}#{_mid(memory_id)}"), "memory_id": n(memory_id),
                "ttl": n(int(now) + MARKER_TTL_S)}}})
        batch_write(self.client, STORE, self.table, requests)

    def memory_ids(self, workspace_id: str) -> list[int]:
        """Every memory id of the workspace (the reindex path: reads the whole M# range)."""
        return [get_n(i, "memory_id") for i in query_all(
            self.client, STORE, TableName=self.table, ProjectionExpression="memory_id",
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": s(f"MW#{workspace_id}"), ":prefix": s("M#")})]
