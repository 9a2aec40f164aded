"""The embedded memory store's lexical leg: BM25 over name, description and body from cached per-workspace postings.

Why not the FTS5 table: FTS5 scores every memory that holds a query word and SQLite then checks each one's
eligibility by key, so the leg's cost grows with the workspace (recall p50 97 ms at 10k memories, 323 ms at 100k
in bench.latency.recall, against 19 / 35 ms for the whole recall before the leg existed). Here, as for the vector
leg: the postings of a workspace are read once into numpy arrays (grown by the rows newer than the ones they hold
when `memory_meta.version` moves, rebuilt when `memory_rewrites` does), a query adds its terms' BM25 weights into
one score array, the compiled eligibility predicate masks it (the facet columns' numpy mask), and the top k are
taken. Cost: the query terms' postings, never a per-memory lookup.

Scoring: Okapi BM25 (k1 1.2, b 0.75) per field, weighted name 2.0, description 1.5, body 1.0 (the FTS5 leg's
weights), idf log(1 + (N - df + 0.5) / (df + 0.5)) over the workspace's memories. Words: lowercase, split on
non-alphanumerics, English Snowball stems (tantivy's analyser); query words drop stopwords like every lexical
query here (models/query_text.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from agentkb.models.query_text import MAX_QUERY_TERMS, query_words

K1, B = 1.2, 0.75
FIELD_WEIGHTS = np.asarray([2.0, 1.5, 1.0], dtype=np.float32)  # name, description, body
FIELDS = ("name", "description", "body")


@lru_cache(maxsize=1)
def _analyzer() -> Any:
    import tantivy

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english")).build())


def analyse(text: str) -> list[str]:
    """The stemmed lowercase words of a text."""
    return list(_analyzer().analyze(text)) if text else []


def query_stems(text: str) -> list[str]:
    """The distinct stems of a query's words (stopwords dropped, as in every lexical query)."""
    stems: list[str] = []
    for word in query_words(text)[:MAX_QUERY_TERMS]:
        for stem in analyse(word):
            if stem not in stems:
                stems.append(stem)
    return stems


@dataclass
class _Postings:
    version: tuple[int, int]
    ids: np.ndarray  # int64, ascending: position -> memory id
    lengths: np.ndarray  # float32 [n, 3]: words per field
    terms: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # stem -> (positions, tf [m, 3])
    # stem -> its postings' field-weighted BM25 tf parts: they depend only on this snapshot (its lengths), so each
    # is computed once per snapshot and a query adds idf x the cached array (one pass over the postings)
    weights: dict[str, np.ndarray] = field(default_factory=dict)

    def extend(self, rows: Sequence[sqlite3.Row]) -> _Postings:
        """A copy holding `rows` too (memory ids above every id held, ascending)."""
        start = len(self.ids)
        lengths = np.zeros((len(rows), 3), dtype=np.float32)
        grown: dict[str, tuple[list[int], list[tuple[int, int, int]]]] = {}
        for offset, row in enumerate(rows):
            counts: dict[str, list[int]] = {}
            for f, name in enumerate(FIELDS):
                words = analyse(row[name] or "")
                lengths[offset, f] = len(words)
                for word in words:
                    counts.setdefault(word, [0, 0, 0])[f] += 1
            for word, tf in counts.items():
                positions, tfs = grown.setdefault(word, ([], []))
                positions.append(start + offset)
                tfs.append((tf[0], tf[1], tf[2]))
        terms = dict(self.terms)
        for word, (positions, tfs) in grown.items():
            new = (np.asarray(positions, dtype=np.int64), np.asarray(tfs, dtype=np.float32).reshape(-1, 3))
            old = terms.get(word)
            terms[word] = new if old is None else (np.concatenate([old[0], new[0]]), np.vstack([old[1], new[1]]))
        ids = np.concatenate([self.ids, np.fromiter((r["id"] for r in rows), np.int64, len(rows))])
        return _Postings(self.version, ids, np.vstack([self.lengths, lengths]), terms)

    def scores(self, stems: Sequence[str]) -> np.ndarray:
        """BM25 of every held memory for these stems (0 where none occurs)."""
        n = len(self.ids)
        out = np.zeros(n, dtype=np.float32)
        if not n:
            return out
        for stem in stems:
            posting = self.terms.get(stem)
            if posting is None:
                continue
            positions = posting[0]
            df = len(positions)
            idf = np.float32(np.log1p((n - df + 0.5) / (df + 0.5)))
            out[positions] += idf * self._weight(stem)
        return out

    def _weight(self, stem: str) -> np.ndarray:
        cached = self.weights.get(stem)
        if cached is None:
            positions, tf = self.terms[stem]
            average = np.maximum(self.lengths.mean(axis=0), 1e-9)
            norm = K1 * (1 - B + B * self.lengths[positions] / average)
            cached = self.weights[stem] = ((tf * (K1 + 1) / (tf + norm)) @ FIELD_WEIGHTS).astype(np.float32)
        return cached


EMPTY = np.zeros(0, dtype=np.int64)


class MemoryPostings:
    """Per-workspace postings, kept in step with the memories table (the vector matrix's versioning)."""

    def __init__(self) -> None:
        self._cache: dict[str, _Postings] = {}
        self._lock = threading.Lock()

    def get(self, conn: sqlite3.Connection, ws: str, version: tuple[int, int]) -> _Postings:
        cached = self._cache.get(ws)
        if cached is not None and cached.version == version:
            return cached
        with self._lock:
            cached = self._cache.get(ws)
            if cached is not None and cached.version == version:
                return cached
            if cached is None or cached.version[1] != version[1]:  # rows changed or went away: rebuild
                cached = _Postings(version, EMPTY, np.zeros((0, 3), dtype=np.float32))
            after = int(cached.ids[-1]) if len(cached.ids) else 0
            rows = conn.execute("SELECT id, name, description, body FROM memories WHERE workspace_id = ? AND id > ?"
                                " ORDER BY id", (ws, after)).fetchall()
            postings = cached.extend(rows) if rows else cached
            postings.version = version
            if len(postings.ids):  # as for the vector matrix: only workspaces holding memories are remembered
                self._cache[ws] = postings
            else:
                self._cache.pop(ws, None)
            return postings
