"""Recall ranks the same on both engines: the hybrid direct leg (lexical + vector candidates, RRF) over the embedded
store and over DynamoDB + the OpenSearch memory index, on small data where each leg's order is unambiguous.

The memories are built so the two legs disagree: one memory only the vector leg finds, one only the lexical leg
finds, one both rank high. The same request must return the same memories in the same order, with the same true
cosine, through `/v1/recall`'s service and through `/ob1/recall`'s candidates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from agentkb.models.domain import Principal
from agentkb.models.memory.api import MemoryRecord
from agentkb.models.recall.api import RecallRequest
from agentkb.services.recall.hybrid import direct_hits, fuse
from agentkb.services.recall.service import RecallDeps, RecallOptions, build_scope, recall

WS = "rank-ws"
QUERY = "zebra migration tuesday"


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


class FixedEmbedder:
    """Every query embeds to the same direction: the vector leg's order is the memories' cosine to it."""

    model_id, dimension = "fixed", 4

    def embed_query(self, text: str) -> list[float]:
        return unit(1, 0, 0, 0)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


# name -> (body, embedding). Lexically: both-high (3 query words) > lexical-only (2) > weak-both (1), the rest none.
# By vector: vector-only > both-high > weak-both > filler-1 > filler-2 > lexical-only.
MEMORIES = {
    "vector-only": ("quokka wombat notes", unit(1, 0.05, 0, 0)),
    "both-high": ("zebra migration runbook for tuesday", unit(1, 0.3, 0, 0)),
    "lexical-only": ("zebra tuesday window", unit(0, 0, 0, 1)),
    "weak-both": ("migration plan", unit(1, 1, 0, 0)),
    "filler-1": ("billing rollback", unit(1, 1.5, 0, 0)),
    "filler-2": ("invoice ledger", unit(1, 2, 0.5, 0)),
}


def record(name: str, body: str, embedding: list[float]) -> MemoryRecord:
    return MemoryRecord(
        workspace_id=WS, project_id=None, visibility="workspace", owner_id="alice", channel_id=None, type="note",
        name=name, description="", body=body, confirmed=True, stale=False, valid_until=None, sensitivity=0,
        source=None, request_hash=f"h-{name}", created_at="2025-06-01T00:00:00Z", updated_at=1_750_000_000.0,
        embedding=embedding, entity_ids=())


def request(max_items: int) -> RecallRequest:
    return RecallRequest.model_validate({
        "schema_version": "openbrain.openclaw.recall.v1", "workspace_id": WS, "task_type": "general",
        "query": QUERY, "entities": {},
        "scope": {"visibility": "workspace", "project_only": False, "include_unconfirmed": False,
                  "include_stale": False},
        "limits": {"max_items": max_items, "max_tokens": 4000},
        "sensitivity": {"contains_code": False, "contains_customer_data": False,
                        "contains_private_meeting_data": False}})


@pytest.fixture
def deps(ports: Any) -> RecallDeps:
    ports.memories.insert_many([record(name, body, vector) for name, (body, vector) in MEMORIES.items()])
    return RecallDeps(ports.memories, ports.graph, FixedEmbedder(), ports.tokenizer, clock=lambda: 1_750_000_100.0)


PRINCIPAL = Principal(id="alice", workspaces=(WS,), scopes=("api:read",))
# k = 3: each leg ranks 6 candidates. vector: vector-only 1, both-high 2, weak-both 3, filler-1 4, filler-2 5,
# lexical-only 6; lexical: both-high 1, lexical-only 2, weak-both 3.
EXPECTED = ["both-high", "weak-both", "lexical-only"]


def test_the_fused_ranking_is_the_same_on_both_engines(deps: RecallDeps) -> None:
    out = recall(request(3), PRINCIPAL, deps).response
    assert [i.name for i in out.direct_matches] == EXPECTED
    assert all(i.source == "direct" for i in out.results) and out.graph_matches == []
    assert out.backend_invoked == deps.backend and out.vec_degraded is not True


def test_every_hit_keeps_its_true_cosine(deps: RecallDeps) -> None:
    out = recall(request(6), PRINCIPAL, deps).response
    query = unit(1, 0, 0, 0)
    for item in out.results:
        cosine = sum(a * b for a, b in zip(MEMORIES[item.name][1], query, strict=True))
        assert item.distance == pytest.approx(1 - cosine, abs=1e-5)
        assert item.score == pytest.approx(cosine, abs=1e-5)
    assert "vector-only" in [i.name for i in out.results]  # found by one leg: still a direct hit


def test_lexical_only_recall_is_the_lexical_leg(deps: RecallDeps) -> None:
    out = recall(request(3), PRINCIPAL, deps, RecallOptions(fallback_fts_only=True)).response
    assert [i.name for i in out.direct_matches] == ["both-high", "lexical-only", "weak-both"]
    assert {i.source for i in out.results} == {"fts_fallback"}


def test_ob1_candidates_are_the_same_fused_legs(deps: RecallDeps) -> None:
    scope = build_scope(request(3), PRINCIPAL, 1_750_000_100.0)
    hits = direct_hits(deps.store, scope, QUERY, unit(1, 0, 0, 0), 3)
    names = {v.memory_id: v.name for v in deps.store.views(WS, [h.memory_id for h in hits]).values()}
    assert [names[h.memory_id] for h in hits][:3] == EXPECTED
    assert {names[h.memory_id] for h in hits} == set(MEMORIES)


def test_fusion_ties_break_by_memory_id() -> None:
    # 1 is first in the vector leg, 2 first in the lexical leg: equal fused relevance, so the lower id wins.
    hits = fuse([(1, 0.9), (2, 0.5)], [(2, 3.0), (1, 1.0)], {})
    assert [h.memory_id for h in hits] == [1, 2] and hits[0].relevance == hits[1].relevance
    # equal scores to 6 significant digits share a rank: float noise does not order equal texts
    hits = fuse([(3, 0.59577763), (1, 0.59577751), (2, 0.59577751)], [], {})
    assert [h.memory_id for h in hits] == [1, 2, 3]


def test_occurred_at_is_kept_beside_created_at(ports: Any) -> None:
    dated = MemoryRecord(**{**vars_of(record("dated", "the launch", unit(1, 0, 0, 0))),
                            "occurred_at": "2023-05-07T00:00:00.000Z"})
    first, second = ports.memories.insert_many([dated, record("undated", "notes", unit(0, 1, 0, 0))])
    found = ports.memories.get_many(WS, [first, second])
    assert found[first].occurred_at == "2023-05-07T00:00:00.000Z" and found[first].created_at == "2025-06-01T00:00:00Z"
    assert found[second].occurred_at is None


def vars_of(r: MemoryRecord) -> dict[str, Any]:
    return {name: getattr(r, name) for name in r.__dataclass_fields__}
