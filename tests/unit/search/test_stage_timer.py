"""The search service's stage-timing hook (`SearchDeps.stages`, used by bench/latency/stages.py): a timer sees every
stage of a hybrid search, the lexical leg's on its pool thread, and changes nothing in the answer."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any

from agentkb.models.domain import EmbeddingProfile, IndexHit, IndexQuery, KnowledgeBase, LegHit, Principal
from agentkb.models.search import KnowledgeSearchRequest
from agentkb.services.search.service import UNTIMED, SearchDeps, search_knowledge

KB = KnowledgeBase("kb1", "ws1", "docs", None, EmbeddingProfile("fake", 2), (), "2026-01-01T00:00:00Z")
CHUNKS = {f"c{i}": (f"d{i}", [1.0, i / 10]) for i in range(5)}


class Catalog:
    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None:
        return KB if kb_id == KB.id else None

    def workspace_search_mode(self, workspace_id: str) -> str | None:
        return None


class Index:
    def lexical_search(self, query: IndexQuery) -> list[LegHit]:
        return [LegHit(c, KB.id, d, 5.0 - i) for i, (c, (d, _)) in enumerate(CHUNKS.items())]

    def document_search(self, query: IndexQuery) -> list[Any]:
        return []

    def vector_search(self, query: IndexQuery) -> list[LegHit]:
        return [LegHit(c, KB.id, d, v[1]) for c, (d, v) in reversed(CHUNKS.items())]

    def hydrate(self, workspace_id: str, chunk_ids: list[str]) -> dict[str, IndexHit]:
        return {c: IndexHit(c, KB.id, CHUNKS[c][0], f"{c}.md", None, f"text of {c}", 0, {}, 0.0) for c in chunk_ids}

    def similarities(self, chunk_ids: list[str], vector: list[float]) -> dict[str, float]:
        return dict.fromkeys(chunk_ids, 0.5)


class Embedder:
    model_id, dimension = "fake", 2

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]


class Recorder:
    """A StageTimer that notes each stage's label and the thread it ran on."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def stage(self, label: str) -> AbstractContextManager[object]:
        return self._stage(label)

    @contextmanager
    def _stage(self, label: str) -> Iterator[None]:
        yield
        with self._lock:
            self.seen.append((label, threading.current_thread().name))


def test_a_timer_sees_every_stage_and_the_answer_is_the_untimed_one() -> None:
    deps = SearchDeps(Catalog(), Index(), Embedder(), reranker=None)  # type: ignore[arg-type]
    request = KnowledgeSearchRequest(workspaceId="ws1", knowledgeBaseIds=[KB.id], query="reset", topK=3)
    principal = Principal("alice", ("ws1",), ("api:read",))
    assert deps.stages is UNTIMED
    untimed = search_knowledge(request, principal, deps)
    # Given a recording timer in the deps, When the same hybrid search runs
    recorder = Recorder()
    timed = search_knowledge(request, principal, replace(deps, stages=recorder))
    # Then the answer is the same, and every stage was timed, the lexical leg on its pool thread
    assert timed.data == untimed.data
    stages = dict(recorder.seen)
    assert set(stages) == {"service: read the knowledge bases", "service: retrieve (mode, legs, fusion)",
                           "service: fair share, hydration", "service: results and models", "leg: query embedding",
                           "leg: lexical, on its pool thread", "fusion: hybrid RRF"}
    assert stages["leg: lexical, on its pool thread"].startswith("search-leg")
    assert stages["leg: query embedding"] == threading.current_thread().name
