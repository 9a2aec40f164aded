"""MemoryStore on DynamoDB (memory table, string pk/sk): DynamoDB is the source of truth, read-after-write is immediate.

Items (`ws` = workspace id, `<id>` = the memory id zero-padded to 12 digits so sort order is id order):
  MSEQ              #SEQ              next: the global memory id counter (ADD, like SQLite's INTEGER PRIMARY KEY)
  MW#<ws>           #META             dim: the workspace's vector dimension
  MW#<ws>           M#<id>            the revision: every field, text (name/description/body) and the facets below
  MW#<ws>           V#<id>            the vector leg: facets + embedding (B, float32 little-endian)
  MW#<ws>           N#<name>          memory_id, revision of the live revision: name uniqueness (conditional put)
  MW#<ws>           O#<n>:<owner>#<name>  the same for a personal name, in its owner's namespace (dynamodb_memory_names)
  MW#<ws>           I#["principal","key"]  body_hash, memory_id: idempotency (attribute_not_exists)
  MW#<ws>           P#~<id>           unindexed: written with the memory when an index is attached (track_index),
                                      deleted once the OpenSearch memory index accepted the document
  MW#<ws>           WB#<stage>        a staged write-back: status pending|committed|aborted, first id, claim keys,
                                      entity ids (dynamodb_memory_staging.py; swept: dynamodb_memory_sweep.py)
  MLAYOUT           #NAMES            version 2 once no old-layout personal N# claim is left (dynamodb_memory_layout)
  MW#<ws>           P#<ms>#<id>       indexed at <ms> (epoch ms, 13 digits): pending until the index shows it; ttl
  ME#<ws>#<entity>  <id>              a memory <-> entity link
Facets (eligibility): vis_rank, project_id, channel_id, owner_id (absent = NULL), sensitivity, confirmed, stale,
superseded (0/1), valid_until (absent = open-ended), updated_at.

Eligibility is the compiled predicate (models/eligibility.py) as a FilterExpression (`eligibility_filter`), applied
inside the Query before anything is ranked. OB1 fields ride on M# as `labels` (map) and `extra` (JSON string).

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

`insert_batch` (OB1 write-back) is one TransactWriteItems of new names, or a staged write-back past 24 memories
(dynamodb_memory_staging.py: items carrying `wb` are visible once their `WB#` record is committed). With the OpenSearch
legs (indexed_memory.py) this store stays the truth: it writes the `P#` markers (dynamodb_memory_markers.py) and
re-checks every index candidate (`is_eligible`). Listing, changes and deletes: dynamodb_memory_details.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.batches import DynamoDbMemoryBatches
from agentkb.adapters.aws.dynamodb.memory.details import DynamoDbMemoryDetails
from agentkb.adapters.aws.dynamodb.memory.items import mid, revision_items, summary
from agentkb.adapters.aws.dynamodb.memory.layout import DynamoDbMemoryLayout
from agentkb.adapters.aws.dynamodb.memory.match import (
    cosine32,
    eligibility_filter,
    float32,
    is_eligible,
    number,
    query_terms,
    rank_by_cosine,
    term_match,
)
from agentkb.adapters.aws.dynamodb.tables import batch_get, batch_write, get_n, get_s, key, n, query_all, s
from agentkb.adapters.aws.errors import is_conditional_failure, store_failure
from agentkb.errors import Conflict
from agentkb.models.memory.api import IdempotencyRecord, MemoryRecord, StoredMemory
from agentkb.models.recall.api import MemoryView, RecallScope

STORE = "memory"


class DynamoDbMemoryStore(DynamoDbMemoryDetails, DynamoDbMemoryBatches, DynamoDbMemoryLayout):
    """MemoryStore port on the memory table. `track_index`: write the unindexed marker with every memory."""

    store = STORE

    def __init__(self, client: Any, table: str, *, track_index: bool = False) -> None:
        super().__init__(client, table)
        self.track_index = track_index

    def _records(self, ws: str, ids: Sequence[int], prefix: str = "M#") -> dict[int, dict[str, Any]]:
        keys = [key(f"MW#{ws}", prefix + mid(i)) for i in dict.fromkeys(ids)]
        found = batch_get(self.client, STORE, self.table, keys)
        return {get_n(item, "memory_id"): item for item in self._published(ws, found)}

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
        return self._published(scope.workspace_id, list(query_all(self.client, STORE, **kwargs)))

    def find_live(self, workspace_id: str, key: str) -> StoredMemory | None:
        pointer = self._get(f"MW#{workspace_id}", key)
        if pointer is None:
            return None
        item = self._get(f"MW#{workspace_id}", "M#" + mid(get_n(pointer, "memory_id")))
        return summary(item) if item else None

    @staticmethod
    def _idem_sk(idem_principal: str, idem_key: str) -> str:
        return "I#" + json.dumps([idem_principal, idem_key], ensure_ascii=False, separators=(",", ":"))

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        record = self._get(f"MW#{workspace_id}", self._idem_sk(principal, key))
        if record is None:
            return None
        item = self._get(f"MW#{workspace_id}", "M#" + mid(get_n(record, "memory_id")))
        return (get_s(record, "body_hash") or "", summary(item)) if item else None

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        ws = f"MW#{record.workspace_id}"
        if idempotency is not None and self._get(ws, self._idem_sk(idempotency.principal, idempotency.key)):
            raise Conflict("This idempotency key was already used")
        memory_id = self._allocate(1)
        claim = self._claim(record, memory_id)
        previous, revision = claim.previous, claim.revision
        item, vector, links = revision_items(record, memory_id, revision, previous)
        batch_write(self.client, STORE, self.table, [{"PutRequest": {"Item": link}} for link in links])
        actions: list[dict[str, Any]] = [*claim.actions, {"Put": {"TableName": self.table, "Item": item}},
                                         {"Put": {"TableName": self.table, "Item": vector}},
                                         {"Update": self._meta(record)}]
        if previous is not None:
            actions += [{"Update": {"TableName": self.table, "Key": key(ws, prefix + mid(previous)),
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
        return summary(item)

    def vector_dimension(self, workspace_id: str) -> int | None:
        meta = self._get(f"MW#{workspace_id}", "#META")
        return get_n(meta, "dim") if meta and "dim" in meta else None

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
        """Exact cosine (dot product of L2-normalised vectors) over the eligible V# items, best first, then id."""
        items = ((get_n(item, "memory_id"), item)
                 for item in self._eligible(scope, "V#", projection="memory_id, embedding, wb"))
        return rank_by_cosine(items, vector, k, boosts)

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        query32 = float32(vector)
        return {memory_id: cosine32(item, query32)
                for memory_id, item in self._records(workspace_id, memory_ids, "V#").items()}

    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        terms = query_terms(text)
        if not terms:
            return []
        docs = [(get_n(item, "memory_id"), item)
                for item in self._eligible(scope, "M#", projection="memory_id, #n, description, body, wb")]
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
        return {memory_id: MemoryView(memory_id=memory_id, name=get_s(item, "name") or "",
                                      namespace=get_s(item, "project_id") or get_s(item, "workspace_id") or "",
                                      type=get_s(item, "type") or "", description=get_s(item, "description") or "",
                                      snippet=(get_s(item, "body") or "")[:200])
                for memory_id, item in self._records(workspace_id, memory_ids).items()}
