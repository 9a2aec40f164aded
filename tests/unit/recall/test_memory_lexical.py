"""The embedded lexical leg (adapters/embedded/sqlite/memory/lexical.py): BM25 over cached postings, the eligibility
mask applied before the top k, postings grown by appends and rebuilt after in-place changes."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from agentkb.adapters.embedded.sqlite.db import Database
from agentkb.adapters.embedded.sqlite.memory.lexical import K1, B, analyse, query_stems
from agentkb.adapters.embedded.sqlite.memory.store import SqliteMemoryStore
from agentkb.models.memory.api import VISIBILITY_RANK, MemoryRecord
from agentkb.models.memory.detail import MemoryChange
from agentkb.models.recall.api import RecallScope
from tests import memory_records
from tests.memory_records import WS


def record(name: str, body: str, **fields: Any) -> MemoryRecord:
    """A shared-vocabulary record whose only words are its name and body (no description), on a 2-d vector."""
    return memory_records.record(name, body, **{"description": "", "embedding": [1.0, 0.0], **fields})


def scope(**fields: Any) -> RecallScope:
    return memory_records.scope(**{"audience_rank": VISIBILITY_RANK["workspace"], **fields})


def names(store: SqliteMemoryStore, hits: list[tuple[int, float]]) -> list[str]:
    views = store.views(WS, [i for i, _ in hits])
    return [views[i].name for i, _ in hits]


def test_stems_and_stopwords() -> None:
    assert analyse("Running migrations, 8 May") == ["run", "migrat", "8", "may"]
    assert query_stems("When did the migrations run? migration") == ["migrat", "run"]


def test_scores_are_okapi_bm25_with_field_weights(tmp_path: Path) -> None:
    store = SqliteMemoryStore(Database(tmp_path / "db.sqlite3"))
    store.insert_many([record("a", "zebra zebra quokka"), record("b", "quokka"), record("c", "wombat koala")])
    hits = dict(zip(names(store, store.lexical_search(scope(), "zebra", 5)),
                    [s for _, s in store.lexical_search(scope(), "zebra", 5)], strict=True))
    # one doc of three holds "zebra", twice in a 3-word body; bodies average 2 words; names are one word each
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 2 * (K1 + 1) / (2 + K1 * (1 - B + B * 3 / 2))
    assert list(hits) == ["a"] and abs(hits["a"] - expected) < 1e-4
    store.insert_many([record("koala", "notes"), record("d", "koala notes")])
    assert names(store, store.lexical_search(scope(), "koala", 5)) == ["koala", "c", "d"]  # the name weighs 2


def test_eligibility_applies_before_the_top_k(tmp_path: Path) -> None:
    store = SqliteMemoryStore(Database(tmp_path / "db.sqlite3"))
    store.insert_many([record("secret", "zebra zebra zebra", sensitivity=1), record("stale", "zebra zebra", stale=True),
                       record("plain", "zebra and more words here"), record("other", "quokka")])
    assert names(store, store.lexical_search(scope(), "zebra", 1)) == ["plain"]  # the better ones are ineligible
    assert names(store, store.lexical_search(scope(allowed_sensitivity=1, include_stale=True), "zebra", 3)) == [
        "secret", "stale", "plain"]
    assert store.lexical_search(scope(workspace_id="elsewhere"), "zebra", 3) == []


def test_postings_follow_appends_changes_and_deletes(tmp_path: Path) -> None:
    store = SqliteMemoryStore(Database(tmp_path / "db.sqlite3"))
    first = store.insert_many([record("one", "zebra")])[0]
    assert names(store, store.lexical_search(scope(), "zebra", 5)) == ["one"]
    store.insert_many([record("two", "zebra zebra")])  # appended to the cached postings
    assert names(store, store.lexical_search(scope(), "zebra", 5)) == ["two", "one"]
    store.update(WS, first, MemoryChange(body="quokka", embedding=[1.0, 0.0]))  # in place: rebuilt
    assert names(store, store.lexical_search(scope(), "zebra", 5)) == ["two"]
    assert names(store, store.lexical_search(scope(), "quokka", 5)) == ["one"]
    store.delete(WS, first)
    assert store.lexical_search(scope(), "quokka", 5) == []
