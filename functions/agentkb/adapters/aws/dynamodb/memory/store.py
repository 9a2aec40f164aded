"""MemoryStore on DynamoDB (memory table, string pk/sk): DynamoDB is the source of truth, read-after-write is immediate.

Items (`ws` = workspace id, `<id>` = the memory id zero-padded to 12 digits so sort order is id order):
  MSEQ              #SEQ              next: the global memory id counter (ADD, like SQLite's INTEGER PRIMARY KEY)
  MW#<ws>           #META             dim: the workspace's vector dimension
  MW#<ws>           M#<id>            the revision: every field, text (name/description/body) and the facets below
  MW#<ws>           V#<id>            the vector leg: facets + embedding (B, float32 little-endian)
  MW#<ws>           N#<name>          memory_id, revision of the live revision: name uniqueness (conditional put)
  MW#<ws>           O#<n>:<owner>#<name>  the same for a personal name, in its owner's namespace (names.py)
  MW#<ws>           I#["principal","key"]  body_hash, memory_id: idempotency (attribute_not_exists)
  MW#<ws>           P#~<id>           unindexed: written with the memory when an index is attached (track_index),
                                      deleted once the OpenSearch memory index accepted the document
  MW#<ws>           WB#<stage>        a staged write-back: status pending|committed|aborted, first id, claim keys,
                                      entity ids (staging.py; swept: sweep.py)
  MLAYOUT           #NAMES            version 2 once no old-layout personal N# claim is left (layout.py)
  MW#<ws>           P#<ms>#<id>       indexed at <ms> (epoch ms, 13 digits): pending until the index shows it; ttl
  ME#<ws>#<entity>  <id>              a memory <-> entity link
  MI#["<ws>","<src>"]  #REMAP / M#<id>  an import of workspace src's archive into ws: whether it gives new ids
                                      (remap 0/1), and each archive memory id's new one (old_id, new_id; archive.py)
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

Writes: `insert` is one TransactWriteItems after the entity links (revisions.py); `insert_many` is a bulk load with
BatchWriteItem: not atomic on DynamoDB (25 items per request).

`insert_batch` (OB1 write-back) is one TransactWriteItems of new names, or a staged write-back past 24 memories
(staging.py: items carrying `wb` are visible once their `WB#` record is committed). With the OpenSearch legs
(indexed_memory.py) this store stays the truth: it writes the `P#` markers (markers.py) and re-checks every index
candidate (`is_eligible`). Listing, changes and deletes: details.py; the recall legs: recall.py.

The store is a front: its parts (one per concern, a module each) share one table handle (`db`) and each other as
attributes, and every port method hands its call to the part that owns it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.batches import DynamoDbMemoryBatches
from agentkb.adapters.aws.dynamodb.memory.details import DynamoDbMemoryDetails
from agentkb.adapters.aws.dynamodb.memory.layout import DynamoDbMemoryLayout, NameConversion
from agentkb.adapters.aws.dynamodb.memory.markers import DynamoDbMemoryMarkers
from agentkb.adapters.aws.dynamodb.memory.names import DynamoDbMemoryNames
from agentkb.adapters.aws.dynamodb.memory.recall import DynamoDbMemoryRecall
from agentkb.adapters.aws.dynamodb.memory.revisions import DynamoDbMemoryRevisions
from agentkb.adapters.aws.dynamodb.memory.staging import DynamoDbMemoryStaging
from agentkb.adapters.aws.dynamodb.memory.sweep import DynamoDbMemorySweep, SweepReport
from agentkb.adapters.aws.dynamodb.tables import ClientFactory, DynamoDbTable
from agentkb.models.memory.api import IdempotencyRecord, MemoryRecord, StoredMemory
from agentkb.models.memory.detail import MemoryChange, MemoryDetail, MemoryListQuery, MemoryPage
from agentkb.models.recall.api import MemoryView, RecallScope

STORE = "memory"


class DynamoDbMemoryStore:
    """MemoryStore port on the memory table. `track_index`: write the unindexed marker with every memory (the
    markers part holds the switch)."""

    def __init__(self, client: ClientFactory, table: str, *, track_index: bool = False) -> None:
        self.table = table
        self.db = DynamoDbTable(client, table, store=STORE)
        self.markers = DynamoDbMemoryMarkers(self.db, track_index=track_index)
        self.names = DynamoDbMemoryNames(self.db)
        self.layout = DynamoDbMemoryLayout(self.db)
        self.staging = DynamoDbMemoryStaging(self.db, self.markers)
        self.sweep = DynamoDbMemorySweep(self.db, self.staging)
        self.batches = DynamoDbMemoryBatches(self.db, self.markers, self.staging, self.sweep)
        self.revisions = DynamoDbMemoryRevisions(self.db, self.markers, self.names)
        self.recall = DynamoDbMemoryRecall(self.db, self.markers)
        self.details = DynamoDbMemoryDetails(self.db, self.markers)

    # -- writes (revisions.py, batches.py) ------------------------------------------------------------------
    def find_live(self, workspace_id: str, key: str) -> StoredMemory | None:
        return self.revisions.find_live(workspace_id, key)

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        return self.revisions.find_idempotent(workspace_id, principal, key)

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        return self.revisions.insert(record, idempotency)

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        return self.batches.insert_many(records)

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        return self.batches.insert_batch(records)

    # -- recall legs (recall.py) ------------------------------------------------------------------------------
    def vector_dimension(self, workspace_id: str) -> int | None:
        return self.recall.vector_dimension(workspace_id)

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
        return self.recall.vector_search(scope, vector, k, boosts)

    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        return self.recall.lexical_search(scope, text, k)

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        return self.recall.similarities(workspace_id, memory_ids, vector)

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        return self.recall.entity_links(workspace_id, memory_ids)

    def linked_memories(self, scope: RecallScope, entity_ids: Sequence[str],
                        per_entity_cap: int) -> list[tuple[int, str]]:
        return self.recall.linked_memories(scope, entity_ids, per_entity_cap)

    def views(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryView]:
        return self.recall.views(workspace_id, memory_ids)

    # -- one memory in full, listings, changes, forgetting (details.py) ---------------------------------------
    def list_memories(self, query: MemoryListQuery) -> MemoryPage:
        return self.details.list_memories(query)

    def get(self, workspace_id: str, memory_id: int, viewer: str | None = None) -> MemoryDetail | None:
        return self.details.get(workspace_id, memory_id, viewer)

    def get_many(self, workspace_id: str, memory_ids: Sequence[int],
                 viewer: str | None = None) -> dict[int, MemoryDetail]:
        return self.details.get_many(workspace_id, memory_ids, viewer)

    def update(self, workspace_id: str, memory_id: int, change: MemoryChange) -> MemoryDetail | None:
        return self.details.update(workspace_id, memory_id, change)

    def delete(self, workspace_id: str, memory_id: int) -> list[int]:
        return self.details.delete(workspace_id, memory_id)

    # -- the OpenSearch legs' bookkeeping (markers.py) and the operator's repair (sweep.py, layout.py) -------
    def items(self, workspace_id: str, memory_ids: Sequence[int], prefix: str) -> dict[int, dict[str, Any]]:
        return self.markers.items(workspace_id, memory_ids, prefix)

    def pending(self, workspace_id: str, indexed_since: float) -> set[int]:
        return self.markers.pending(workspace_id, indexed_since)

    def unindexed(self, workspace_id: str, limit: int | None = None) -> list[int]:
        return self.markers.unindexed(workspace_id, limit)

    def mark_unindexed(self, workspace_id: str, memory_ids: Sequence[int]) -> None:
        self.markers.mark_unindexed(workspace_id, memory_ids)

    def mark_indexed(self, workspace_id: str, memory_ids: Sequence[int], now: float) -> None:
        self.markers.mark_indexed(workspace_id, memory_ids, now)

    def memory_ids(self, workspace_id: str) -> list[int]:
        return self.markers.memory_ids(workspace_id)

    def sweep_stages(self, workspace_id: str, *, pages: int | None = None) -> SweepReport:
        return self.sweep.sweep_stages(workspace_id, pages=pages)

    def convert_names(self, *, pages: int | None = None) -> NameConversion:
        return self.layout.convert_names(pages=pages)
