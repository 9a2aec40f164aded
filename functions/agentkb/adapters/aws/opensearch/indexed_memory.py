"""MemoryStore with OpenSearch memory legs: DynamoDB is the truth, the memory index finds candidates past ~10k.

Writes: DynamoDB first (the memory and its `P#~` unindexed marker in one transaction), then the memory's current
document (and the superseded previous revision's) is projected into the index. Success turns the marker into an
indexed marker `P#<ms>#<id>`; a failed index write is logged, keeps the marker and the write still succeeds. The
next write to the workspace retries up to REPAIR_BATCH unindexed memories; `agentkb memory reindex` repairs the
rest (docs/operations-aws.md).

Reads: the index leg (filtered kNN or BM25, eligibility inside the query) is over-fetched, every candidate is
re-checked on a consistent read of its DynamoDB item (superseded/stale may lag in the index) and merged with the
pending memories (unindexed, or indexed less than PENDING_WINDOW_S ago), which are always scored exactly from
DynamoDB. So a memory is recallable right after its 201 and no accepted write is lost if OpenSearch fails.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.memory.match import (
    is_eligible,
    number,
    query_terms,
    rank_by_cosine,
    term_match,
    unpack,
)
from agentkb.adapters.aws.dynamodb.memory.store import DynamoDbMemoryStore
from agentkb.adapters.aws.dynamodb.tables import get_n, get_s
from agentkb.adapters.aws.opensearch.memory import OpenSearchMemoryIndex
from agentkb.errors import DependencyError, DomainError
from agentkb.models.memory.api import IdempotencyRecord, MemoryRecord, StoredMemory
from agentkb.models.memory.detail import MemoryChange, MemoryDetail, MemoryListQuery, MemoryPage
from agentkb.models.recall.api import MemoryView, RecallScope

PENDING_WINDOW_S = 120.0  # OpenSearch Serverless shows writes after ~10-60 s: twice that, in this one place
OVERFETCH = 4  # index candidates per wanted result (re-check losses: superseded/stale flags lagging in the index)
MIN_CANDIDATES = 40
MAX_CANDIDATES = 1000  # the over-fetch grows x4 while the re-check leaves fewer than k, up to this
REPAIR_BATCH = 25  # unindexed memories a successful write retries on the way
SYNC_BATCH = 200  # memories projected into the index per bulk request
log = logging.getLogger("agentkb.memory_index")


def memory_document(record: dict[str, Any], vector: dict[str, Any]) -> dict[str, Any]:
    """The index document of one revision, from its DynamoDB M# (record) and V# (vector) items."""
    document: dict[str, Any] = {
        "memory_id": get_n(record, "memory_id"), "workspace_id": get_s(record, "workspace_id"),
        "name": get_s(record, "name") or "", "description": get_s(record, "description") or "",
        "body": get_s(record, "body") or "", "entity_ids": json.loads(get_s(record, "entity_ids") or "[]"),
        **{f: get_n(record, f) for f in ("vis_rank", "sensitivity", "confirmed", "stale", "superseded")},
        "updated_at": number(record, "updated_at"),
        "embedding": list(unpack(bytes(vector["embedding"]["B"])))}
    for name in ("project_id", "channel_id", "owner_id"):
        if name in record:
            document[name] = get_s(record, name)
    if "valid_until" in record:
        document["valid_until"] = number(record, "valid_until")
    return document


def _code(exc: Exception) -> str:
    return str(getattr(exc, "code", None) or type(exc).__name__)


class IndexedMemoryStore:
    """MemoryStore port: the DynamoDB store (`truth`) plus the OpenSearch memory index for the recall legs."""

    def __init__(self, truth: DynamoDbMemoryStore, index: OpenSearchMemoryIndex, *,
                 clock: Callable[[], float] = time.time) -> None:
        truth.markers.track_index = True  # the `P#~` marker joins each memory's own DynamoDB transaction
        self.truth = truth
        self.index = index
        self.clock = clock

    # -- writes -------------------------------------------------------------------------------------------------
    def find_live(self, workspace_id: str, key: str) -> StoredMemory | None:
        return self.truth.find_live(workspace_id, key)

    def find_idempotent(self, workspace_id: str, principal: str, key: str) -> tuple[str, StoredMemory] | None:
        return self.truth.find_idempotent(workspace_id, principal, key)

    def insert(self, record: MemoryRecord, idempotency: IdempotencyRecord | None = None) -> StoredMemory:
        stored = self.truth.insert(record, idempotency)
        previous = stored.response.get("supersedes")
        self.sync(record.workspace_id, [stored.memory_id, *([previous] if previous is not None else [])])
        return stored

    def insert_batch(self, records: Sequence[MemoryRecord]) -> list[StoredMemory]:
        stored = self.truth.insert_batch(records)
        if stored:
            self.sync(records[0].workspace_id, [m.memory_id for m in stored])
        return stored

    def get(self, workspace_id: str, memory_id: int, viewer: str | None = None) -> MemoryDetail | None:
        return self.truth.get(workspace_id, memory_id, viewer)

    def get_many(self, workspace_id: str, memory_ids: Sequence[int],
                 viewer: str | None = None) -> dict[int, MemoryDetail]:
        return self.truth.get_many(workspace_id, memory_ids, viewer)

    def list_memories(self, query: MemoryListQuery) -> MemoryPage:
        return self.truth.list_memories(query)

    def update(self, workspace_id: str, memory_id: int, change: MemoryChange) -> MemoryDetail | None:
        """Change the truth (with an unindexed marker), then re-project the memory into the index."""
        changed = self.truth.update(workspace_id, memory_id, change)
        if changed is not None:
            self.sync(workspace_id, [memory_id])
        return changed

    def delete(self, workspace_id: str, memory_id: int) -> list[int]:
        """Forget in the truth first (recall re-checks every hit there), then drop the index documents."""
        dimension = self.truth.vector_dimension(workspace_id)
        deleted = self.truth.delete(workspace_id, memory_id)
        if deleted and dimension is not None:
            try:
                self.index.remove(dimension, workspace_id, deleted)
            except (DomainError, DependencyError) as exc:  # the re-check drops hits of deleted memories anyway
                log.warning("memory index delete failed", extra={"workspace_id": workspace_id, "error": _code(exc)})
        return deleted

    def insert_many(self, records: Sequence[MemoryRecord]) -> list[int]:
        ids = self.truth.insert_many(records)
        by_workspace: dict[str, list[int]] = {}
        for r, memory_id in zip(records, ids, strict=True):
            by_workspace.setdefault(r.workspace_id, []).append(memory_id)
        for workspace_id, written in by_workspace.items():
            for start in range(0, len(written), SYNC_BATCH):  # every batch is tried: a failed one stays marked
                self.sync(workspace_id, written[start:start + SYNC_BATCH])
        return ids

    def sync(self, workspace_id: str, memory_ids: Sequence[int], *, repair: bool = True) -> bool:
        """Project the truth of these memories into the index; False (logged, marked unindexed) if that failed."""
        try:
            records = self.truth.items(workspace_id, memory_ids, "M#")
            vectors = self.truth.items(workspace_id, memory_ids, "V#")
            by_dimension: dict[int, list[dict[str, Any]]] = {}
            for memory_id in memory_ids:
                if memory_id in records and memory_id in vectors:
                    document = memory_document(records[memory_id], vectors[memory_id])
                    by_dimension.setdefault(len(document["embedding"]), []).append(document)
            for dimension, documents in by_dimension.items():
                self.index.replace(dimension, documents)
        except (DomainError, DependencyError) as exc:  # committed in DynamoDB: recall serves it from there
            log.warning("memory index write failed; served from DynamoDB until repaired",
                        extra={"workspace_id": workspace_id, "memory_ids": list(memory_ids), "error": _code(exc)})
            self._mark_unindexed(workspace_id, memory_ids)
            return False
        try:  # bookkeeping after the fact: a failure leaves the `P#~` markers, so recall still reads DynamoDB
            self.truth.mark_indexed(workspace_id, memory_ids, self.clock())
            if repair:
                self.repair(workspace_id, REPAIR_BATCH, skip=memory_ids)
        except (DomainError, DependencyError) as exc:
            log.warning("memory index bookkeeping failed", extra={"workspace_id": workspace_id, "error": _code(exc)})
        return True

    def _mark_unindexed(self, workspace_id: str, memory_ids: Sequence[int]) -> None:
        try:
            self.truth.mark_unindexed(workspace_id, memory_ids)
        except (DomainError, DependencyError) as exc:  # a new memory's marker was written with it already
            log.warning("could not mark memories unindexed", extra={"workspace_id": workspace_id,
                                                                     "error": _code(exc)})

    def repair(self, workspace_id: str, limit: int | None = None, skip: Collection[int] = ()) -> int:
        """Re-sync unindexed memories (at most `limit`), stopping at the first failure; returns how many synced."""
        return self._sync_batches(workspace_id, [i for i in self.truth.unindexed(workspace_id, limit) if i not in skip])

    def reindex(self, workspace_id: str) -> int:
        """Re-project every memory of the workspace (backfill, or a lost index); stops at the first failure, whose
        memories stay marked unindexed. Returns how many were re-indexed."""
        return self._sync_batches(workspace_id, self.truth.memory_ids(workspace_id))

    def _sync_batches(self, workspace_id: str, memory_ids: Sequence[int]) -> int:
        """Sync in batches of SYNC_BATCH, stopping at the first failure; returns how many synced."""
        done = 0
        for start in range(0, len(memory_ids), SYNC_BATCH):
            batch = memory_ids[start:start + SYNC_BATCH]
            if not self.sync(workspace_id, batch, repair=False):
                break
            done += len(batch)
        return done

    # -- recall legs --------------------------------------------------------------------------------------------
    def vector_dimension(self, workspace_id: str) -> int | None:
        return self.truth.vector_dimension(workspace_id)

    def _pending(self, workspace_id: str) -> set[int]:
        return self.truth.pending(workspace_id, self.clock() - PENDING_WINDOW_S)

    def _candidates(self, scope: RecallScope, k: int, prefix: str, extra: Iterable[int],
                    search: Callable[[int], tuple[list[tuple[int, float]], bool]],
                    ) -> tuple[dict[int, float], dict[int, dict[str, Any]]]:
        """(index score, eligible DynamoDB item) of the over-fetched index hits plus `extra`, re-checked on truth."""
        size = max(MIN_CANDIDATES, OVERFETCH * k)
        scores: dict[int, float] = {}
        eligible: dict[int, dict[str, Any]] = {}
        seen: set[int] = set()
        todo = list(dict.fromkeys(extra))
        while True:
            hits, full = search(size)
            todo += [i for i, _ in hits if i not in seen]
            for memory_id, item in self.truth.items(scope.workspace_id, todo, prefix).items():
                if is_eligible(item, scope):
                    eligible[memory_id] = item
            seen.update(todo)
            todo = []
            scores = {i: score for i, score in hits if i in eligible}
            if not full or len(scores) >= k or size >= MAX_CANDIDATES:
                return scores, eligible
            size = min(MAX_CANDIDATES, size * 4)

    def vector_search(self, scope: RecallScope, vector: Sequence[float], k: int,
                      boosts: Mapping[int, float] | None = None) -> list[tuple[int, float]]:
        """kNN candidates + pending + boosted memories, all scored exactly (float32 cosine) from DynamoDB."""
        if k <= 0:
            return []
        lifted_ids = {i for i, boost in (boosts or {}).items() if boost > 0}
        _, eligible = self._candidates(scope, k, "V#", [*self._pending(scope.workspace_id), *lifted_ids],
                                       lambda size: self.index.knn(scope, vector, size))
        return rank_by_cosine(eligible.items(), vector, k, boosts)

    def lexical_search(self, scope: RecallScope, text: str, k: int) -> list[tuple[int, float]]:
        """BM25 hits (relative to the best one) merged with pending matches (term-match relative to the best)."""
        terms = query_terms(text)
        dimension = self.truth.vector_dimension(scope.workspace_id)
        if not terms or k <= 0 or dimension is None:
            return []
        pending = self._pending(scope.workspace_id)
        bm25, eligible = self._candidates(scope, k, "M#", pending,
                                          lambda size: self.index.bm25(scope, text.strip(), dimension, size))
        top = max(bm25.values(), default=0.0) or 1.0
        merged = {i: score / top for i, score in bm25.items() if score > 0}
        matches = term_match(list(eligible.items()), terms)
        best = matches[0][1] if matches else 1.0
        merged.update({i: score / best for i, score in matches if i in pending and i not in merged})
        return sorted(merged.items(), key=lambda hit: (-hit[1], hit[0]))[:k]

    def similarities(self, workspace_id: str, memory_ids: Sequence[int], vector: Sequence[float]) -> dict[int, float]:
        return self.truth.similarities(workspace_id, memory_ids, vector)

    def linked_memories(self, scope: RecallScope, entity_ids: Sequence[str],
                        per_entity_cap: int) -> list[tuple[int, str]]:
        return self.truth.linked_memories(scope, entity_ids, per_entity_cap)

    def entity_links(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, list[str]]:
        return self.truth.entity_links(workspace_id, memory_ids)

    def views(self, workspace_id: str, memory_ids: Sequence[int]) -> dict[int, MemoryView]:
        return self.truth.views(workspace_id, memory_ids)

