"""An in-memory OpenSearch Serverless for the AWS tests and benchmarks: the Transport the SigV4 transport stands in
for.

It evaluates the subset of the DSL that the document index (opensearch_index.py) and the memory index
(opensearch_memory.py) send: HEAD/PUT index, NDJSON `_bulk`, `_search` with bool filter/must/must_not/should,
match, multi_match, knn with a filter, term, terms, range, wildcard, exists, sort, search_after and `_source`.
Nothing else: an unknown clause fails the caller instead of matching silently. Lexical scores are a small BM25
(k1 1.2, b 0.75, `field^boost`) over lowercased words with plural/-ing/-ed stripped; kNN scores are AOSS
cosinesimil `(1 + cos) / 2`. Writes are visible at once (AOSS takes ~10-60 s). The exact request shapes stay
pinned by the recorded contract suite in tests/contract/.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections import Counter
from typing import Any

from agentkb.adapters.aws.opensearch.dsl import cosine
from agentkb.adapters.aws.opensearch.transport import HttpResponse

_WORD = re.compile(r"\w+", re.UNICODE)
_STOP = frozenset({"a", "an", "and", "are", "as", "at", "be", "by", "for", "if", "in", "into", "is", "it", "no",
                   "not", "of", "on", "or", "the", "their", "then", "there", "these", "they", "this", "to", "was",
                   "will", "with"})


def analyze(text: str) -> list[str]:
    """A crude `english` analyzer: lowercase words, stop words dropped, a few suffixes stemmed."""
    out = []
    for word in _WORD.findall(text.lower()):
        if word in _STOP:
            continue
        for suffix in ("ing", "ed", "es", "s"):
            if word.endswith(suffix) and len(word) > len(suffix) + 2:
                word = word[: -len(suffix)]
                break
        out.append(word)
    return out


def _values(source: dict[str, Any], field: str) -> list[Any]:
    value = source.get(field)
    return [] if value is None else value if isinstance(value, list) else [value]


def matches(source: dict[str, Any], clause: dict[str, Any]) -> bool:
    (kind, spec), = clause.items()
    if kind == "bool":
        should = spec.get("should", [])
        wanted = spec.get("minimum_should_match", 0 if spec.get("filter") or spec.get("must") else 1)
        return (all(matches(source, c) for c in spec.get("filter", []) + spec.get("must", []))
                and not any(matches(source, c) for c in spec.get("must_not", []))
                and (not should or sum(matches(source, c) for c in should) >= int(wanted)))
    if kind == "term":
        (field, value), = spec.items()
        return value in _values(source, field)
    if kind == "terms":
        (field, wanted), = spec.items()
        return any(v in wanted for v in _values(source, field))
    if kind == "exists":
        return bool(_values(source, spec["field"]))
    if kind == "range":
        (field, bounds), = spec.items()
        ops = {"gte": lambda a, b: a >= b, "lte": lambda a, b: a <= b, "gt": lambda a, b: a > b,
               "lt": lambda a, b: a < b}
        return any(all(ops[op](v, bound) for op, bound in bounds.items()) for v in _values(source, field))
    if kind == "wildcard":
        (field, options), = spec.items()
        pattern = options["value"]
        fold = options.get("case_insensitive", False)
        return any(fnmatch.fnmatchcase(str(v).lower() if fold else str(v), pattern.lower() if fold else pattern)
                   for v in _values(source, field))
    if kind == "match":
        (field, options), = spec.items()
        wanted = set(analyze(options["query"]))
        return any(wanted & set(analyze(str(v))) for v in _values(source, field))
    if kind == "multi_match":
        return any(matches(source, {"match": {f.split("^")[0]: {"query": spec["query"]}}}) for f in spec["fields"])
    raise AssertionError(f"the fake OpenSearch does not evaluate {kind!r} clauses")


class FakeOpenSearch:
    """Indexes of documents keyed by a generated `_id`; every request is recorded in `sent`."""

    def __init__(self) -> None:
        self.indexes: dict[str, dict[str, dict[str, Any]]] = {}
        self.mappings: dict[str, dict[str, Any]] = {}
        self.sent: list[tuple[str, str]] = []
        self._next_id = 0

    def request(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> HttpResponse:
        self.sent.append((method, path))
        parts = path.strip("/").split("/")
        name = parts[0]
        if method == "HEAD" and len(parts) == 1:
            return HttpResponse(200 if name in self.indexes else 404, b"", {})
        if method == "PUT" and len(parts) == 1:
            if name in self.indexes:
                return _json(400, {"error": {"type": "resource_already_exists_exception"}})
            self.indexes[name], self.mappings[name] = {}, json.loads(body or b"{}")
            return _json(200, {"acknowledged": True, "index": name})
        if name not in self.indexes:
            return _json(404, {"error": {"type": "index_not_found_exception"}, "status": 404})
        if method == "POST" and parts[1:] == ["_bulk"]:
            return _json(200, self._bulk(name, (body or b"").decode()))
        if method == "POST" and parts[1:] == ["_search"]:
            return _json(200, self._search(name, json.loads(body or b"{}")))
        raise AssertionError(f"the fake OpenSearch does not serve {method} {path}")

    def _bulk(self, name: str, text: str) -> dict[str, Any]:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        docs, items, position = self.indexes[name], [], 0
        while position < len(lines):
            (action, meta), = lines[position].items()
            if action == "index":
                self._next_id += 1
                doc_id = f"os-{self._next_id}"
                docs[doc_id] = lines[position + 1]
                items.append({"index": {"_id": doc_id, "status": 201}})
                position += 2
            elif action == "delete":
                items.append({"delete": {"_id": meta["_id"], "status": 200 if docs.pop(meta["_id"], None) else 404}})
                position += 1
            else:
                raise AssertionError(f"the fake OpenSearch does not take bulk {action!r}")
        return {"took": 1, "errors": False, "items": items}

    def _search(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        docs = self.indexes[name]
        query = body["query"]
        if "knn" in query:
            spec = query["knn"]["embedding"]
            eligible = [(i, d) for i, d in docs.items() if "filter" not in spec or matches(d, spec["filter"])]
            scored = sorted((((1 + cosine(spec["vector"], d["embedding"])) / 2, i, d) for i, d in eligible),
                            key=lambda row: (-row[0], row[1]))[: spec["k"]]
        else:
            spec = query["bool"]
            eligible = [(i, d) for i, d in docs.items() if matches(d, {"bool": spec})]
            musts = [c for c in spec.get("must", []) if "match" in c or "multi_match" in c]
            scored = [(self._bm25(name, musts, d) if musts else 0.0, i, d) for i, d in eligible]
            scored.sort(key=lambda row: (-row[0], row[1]))
        fields_of_sort = [next(iter(s)) for s in body.get("sort", [])]
        if fields_of_sort:
            scored.sort(key=lambda row: [row[2].get(f) for f in fields_of_sort])
            if "search_after" in body:
                scored = [r for r in scored if [r[2].get(f) for f in fields_of_sort] > body["search_after"]]
        hits = []
        for score, doc_id, doc in scored[: body.get("size", 10)]:
            hit: dict[str, Any] = {"_index": name, "_id": doc_id, "_score": score}
            fields = body.get("_source", True)
            if fields is not False:
                hit["_source"] = {k: v for k, v in doc.items() if fields is True or k in fields}
            if fields_of_sort:
                hit["sort"] = [doc.get(f) for f in fields_of_sort]
            hits.append(hit)
        return {"took": 1, "timed_out": False, "hits": {"total": {"value": len(scored), "relation": "eq"},
                                                         "hits": hits}}

    def _bm25(self, name: str, musts: list[dict[str, Any]], doc: dict[str, Any]) -> float:
        """Sum over the must clauses (match, or multi_match with `field^boost`) of a field's BM25 x its boost."""
        docs = list(self.indexes[name].values())
        score = 0.0
        for kind, spec in (next(iter(m.items())) for m in musts):
            fields = [(f, {"query": spec["query"]}) for f in spec["fields"]] if kind == "multi_match" \
                else list(spec.items())
            for field_spec, options in fields:
                field, _, boost = field_spec.partition("^")
                score += float(boost or 1.0) * self._field_bm25(docs, field, options["query"], doc)
        return round(score, 6)

    @staticmethod
    def _field_bm25(docs: list[dict[str, Any]], field: str, query: str, doc: dict[str, Any]) -> float:
        analyzed = [analyze(str(d.get(field) or "")) for d in docs]
        average = sum(len(a) for a in analyzed) / max(1, len(analyzed))
        words = Counter(analyze(str(doc.get(field) or "")))
        length, score = sum(words.values()), 0.0
        for term in set(analyze(query)):
            if not words[term]:
                continue
            frequency = sum(1 for a in analyzed if term in a)
            idf = math.log(1 + (len(docs) - frequency + 0.5) / (frequency + 0.5))
            score += idf * words[term] * 2.2 / (words[term] + 1.2 * (0.25 + 0.75 * length / max(average, 1e-9)))
        return score


def _json(status: int, payload: Any) -> HttpResponse:
    return HttpResponse(status, json.dumps(payload).encode(), {})
