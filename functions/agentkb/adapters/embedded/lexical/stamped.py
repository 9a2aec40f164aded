"""One tantivy index directory (a KB's chunks or its documents) and the change-log sequence it has applied, kept in a
stamp record committed with its changes (lexical/tantivy.py catches it up)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import tantivy

from agentkb.adapters.embedded.lexical.records import STAMP, schema
from agentkb.adapters.embedded.lexical.text import analyzer
from agentkb.errors import DependencyError

WRITER_HEAP = 32_000_000
WRITER_WAIT_S = 30.0


class StampedIndex:
    """One tantivy index directory (chunks or documents) and its applied log sequence."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.schema = schema()
        self.index = self._open()

    def _open(self) -> Any:
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
        except (OSError, ValueError):  # unreadable or another format: SQLite can rebuild it
            shutil.rmtree(self.path, ignore_errors=True)
            self.path.mkdir(parents=True)
            index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
        index.register_tokenizer("agentkb", analyzer())
        index.config_reader(reload_policy="Manual")
        return index

    def stamp(self) -> int | None:
        """The log sequence this index has applied, as committed (None: never built)."""
        searcher = self.index.searcher()
        found = searcher.search(tantivy.Query.term_query(self.schema, "doc", STAMP), 1).hits
        return int(searcher.doc(found[0][1])["seq"][0]) if found else None

    def writer(self) -> Any:
        """The index writer; another process may be catching up: wait for it rather than fail."""
        deadline = time.monotonic() + WRITER_WAIT_S
        while True:
            try:
                return self.index.writer(WRITER_HEAP, 1)
            except ValueError as exc:
                if "LockBusy" not in str(exc) or time.monotonic() > deadline:
                    raise DependencyError("the lexical index is locked by another writer",
                                          code="lexical_index_locked") from exc
                time.sleep(0.05)

    def apply(self, seq: int, changes: Iterable[tuple[Sequence[str], Iterable[dict[str, Any]]]],
              rebuild: bool) -> None:
        """Commit, with the stamp `seq`, each (documents deleted, records added) page of `changes`."""
        writer = self.writer()
        try:
            if rebuild:
                writer.delete_all_documents()
            for deleted, added in changes:
                for document_id in deleted:
                    writer.delete_documents_by_term("doc", document_id)
                for fields in added:
                    writer.add_document(tantivy.Document.from_dict(fields, self.schema))
            writer.delete_documents_by_term("doc", STAMP)
            writer.add_document(tantivy.Document.from_dict({"doc": STAMP, "seq": seq}, self.schema))
            writer.commit()
        except BaseException:
            writer.rollback()
            raise
        finally:
            writer.wait_merging_threads()  # releases the writer lock for other processes
        self.index.reload()

    def search(self, terms: Sequence[str], allowed: tuple[str, list[Any]] | None,
               limit: int) -> tuple[list[tuple[Any, float]], Any]:
        """(address, BM25) of the best `limit` records matching any term (and in the allowed set)."""
        query = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "text", t)) for t in terms])
        if allowed is not None:
            only = tantivy.Query.term_set_query(self.schema, allowed[0], allowed[1])
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query),
                                                 (tantivy.Occur.Must, tantivy.Query.const_score_query(only, 0.0))])
        searcher = self.index.searcher()
        hits = searcher.search(query, limit, count=False).hits
        return [(address, float(score)) for score, address in hits], searcher
