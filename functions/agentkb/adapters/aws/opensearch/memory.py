"""The memory index on OpenSearch Serverless: one index per vector dimension, `<prefix>-memories-<dim>`.

A projection of the DynamoDB memory table (the truth), used only to find candidates fast: filtered kNN and BM25
over name/description/body, each with the compiled recall eligibility predicate (models/eligibility.py) translated
to DSL inside the query (an absent field behaves like SQL NULL). Documents carry our key in
the `memory_id` field (no custom `_id` on vector collections); a memory's document is replaced by looking its
`_id`s up by workspace and memory id and deleting them in the same bulk request that indexes the new version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.errors import is_index_missing
from agentkb.adapters.aws.opensearch.ops import bulk, ensure_index, knn_method, lookup_ids
from agentkb.adapters.aws.opensearch.transport import JsonClient
from agentkb.models.eligibility import Clause, compile_eligibility, translate
from agentkb.models.recall.api import RecallScope

TEXT_FIELDS = ("name^2", "description^1.5", "body")
KEYWORDS = ("workspace_id", "project_id", "channel_id", "owner_id", "entity_ids")
INTEGERS = ("vis_rank", "sensitivity", "confirmed", "stale", "superseded")


def memory_index_name(prefix: str, dimension: int) -> str:
    return f"{prefix}-memories-{dimension}"


def memory_index_body(dimension: int, generation: str) -> dict[str, Any]:
    """Cosine kNN of the dimension, english BM25 text, and the keyword/numeric facets recall eligibility reads."""
    properties: dict[str, Any] = {
        "embedding": {"type": "knn_vector", "dimension": dimension, "method": knn_method(generation)},
        **{name: {"type": "text", "analyzer": "english"} for name in ("name", "description", "body")},
        **{name: {"type": "keyword"} for name in KEYWORDS},
        **{name: {"type": "integer"} for name in INTEGERS},
        "memory_id": {"type": "long"},
        "valid_until": {"type": "double"}, "updated_at": {"type": "double"},
    }
    return {"settings": {"index": {"knn": True}}, "mappings": {"properties": properties}}


class _DslWords:
    """The predicate as filter-context queries (a missing field is NULL)."""

    def all_of(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {"bool": {"filter": parts}}

    def any_of(self, parts: list[dict[str, Any]]) -> dict[str, Any]:
        return {"bool": {"should": parts, "minimum_should_match": 1}}

    def absent(self, field: str) -> dict[str, Any]:
        return {"bool": {"must_not": [{"exists": {"field": field}}]}}

    def one_of(self, field: str, values: tuple[int, ...]) -> dict[str, Any]:
        return {"terms": {field: list(values)}}

    def eq(self, field: str, value: str | int) -> dict[str, Any]:
        return {"term": {field: value}}

    def above(self, field: str, value: float, inclusive: bool) -> dict[str, Any]:
        return {"range": {field: {"gte" if inclusive else "gt": value}}}


def to_dsl(clause: Clause) -> dict[str, Any]:
    """One clause of the compiled eligibility predicate as a filter-context query."""
    return translate(clause, _DslWords())


def eligibility_dsl(scope: RecallScope) -> list[dict[str, Any]]:
    """The compiled eligibility predicate as bool/filter clauses (AND-ed), workspace included."""
    return [{"term": {"workspace_id": scope.workspace_id}},
            *(to_dsl(c) for c in compile_eligibility(scope).clauses)]


class OpenSearchMemoryIndex:
    """Candidate legs over the memory index; every answer is `(memory_id, score)` and still needs the re-check."""

    def __init__(self, client: JsonClient, *, prefix: str, generation: str) -> None:
        self.client = client
        self.prefix = prefix
        self.generation = generation
        self._known: set[str] = set()

    def _name(self, dimension: int) -> str:
        return memory_index_name(self.prefix, dimension)

    def replace(self, dimension: int, documents: Sequence[dict[str, Any]]) -> None:
        """Index each memory's current document, deleting every earlier document of the same memory id."""
        name = self._name(dimension)
        if name not in self._known:
            ensure_index(self.client, name, memory_index_body(dimension, self.generation))
            self._known.add(name)
        by_workspace: dict[str, list[int]] = {}
        for d in documents:
            by_workspace.setdefault(d["workspace_id"], []).append(d["memory_id"])
        old = [i for ws, ids in by_workspace.items() for i in lookup_ids(self.client, name, _of(ws, ids), "memory_id")]
        lines: list[dict[str, Any]] = [{"delete": {"_index": name, "_id": i}} for i in old]
        for document in documents:
            lines += [{"index": {"_index": name}}, document]
        if lines:
            bulk(self.client, name, lines)

    def remove(self, dimension: int, workspace_id: str, memory_ids: Sequence[int]) -> None:
        """Delete every document of these memories of the workspace (a forgotten memory leaves nothing in the
        index)."""
        name = self._name(dimension)
        old = list(lookup_ids(self.client, name, _of(workspace_id, memory_ids), "memory_id"))
        if old:
            bulk(self.client, name, [{"delete": {"_index": name, "_id": i}} for i in old])

    def _search(self, dimension: int, body: dict[str, Any], operation: str) -> tuple[list[tuple[int, float]], bool]:
        """(memory_id, score) hits in the index's order, and whether the page was full (more may exist)."""
        status, found = self.client.call("POST", f"/{self._name(dimension)}/_search", body, operation=operation,
                                         accept=(404,))
        if is_index_missing(status, found):
            return [], False
        hits = [(int(h["_source"]["memory_id"]), float(h.get("_score") or 0.0)) for h in found["hits"]["hits"]]
        return hits, len(hits) >= body["size"]

    def knn(self, scope: RecallScope, vector: Sequence[float], size: int) -> tuple[list[tuple[int, float]], bool]:
        """Filtered kNN (eligibility inside the kNN filter: efficient filtering, never post-filtering)."""
        body = {"size": size, "_source": ["memory_id"], "query": {"knn": {"embedding": {
            "vector": list(vector), "k": size, "filter": {"bool": {"filter": eligibility_dsl(scope)}}}}}}
        return self._search(len(vector), body, "memory_vector_search")

    def bm25(self, scope: RecallScope, text: str, dimension: int,
             size: int) -> tuple[list[tuple[int, float]], bool]:
        """BM25 over name^2, description^1.5 and body (english analyser) with the same eligibility filter."""
        body = {"size": size, "_source": ["memory_id"], "query": {"bool": {
            "must": [{"multi_match": {"query": text, "fields": list(TEXT_FIELDS)}}],
            "filter": eligibility_dsl(scope)}}}
        return self._search(dimension, body, "memory_lexical_search")


def _of(workspace_id: str, memory_ids: Sequence[int]) -> list[dict[str, Any]]:
    """The filter of these memories' documents in one workspace: a memory id names a memory within its workspace
    (the DynamoDB items are the workspace's; an import keeps an archive's ids, which another workspace may hold)."""
    return [{"term": {"workspace_id": workspace_id}}, {"terms": {"memory_id": list(memory_ids)}}]
