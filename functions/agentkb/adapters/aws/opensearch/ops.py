"""OpenSearch Serverless operations shared by the document index and the memory index.

Index creation (HEAD, then PUT; a racing creator's `resource_already_exists` is fine), the kNN method per
collection generation, `_id` lookups by term query (AOSS vector collections take no custom `_id`) and bulk writes
that resend only the items that failed with 429/5xx. Every call goes through aws_http.JsonClient, so retries,
deadlines and the vendor-error mapping (aws_errors) are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agentkb.adapters.aws.errors import RETRYABLE_STATUSES, index_failure, index_throttled, is_index_missing
from agentkb.adapters.aws.opensearch.transport import JsonClient, ndjson

LOOKUP_PAGE = 1000
BULK_ROUNDS = 5


def knn_method(generation: str) -> dict[str, Any]:
    """Cosine HNSW; classic collections need faiss for efficient filtered kNN, NextGen rejects an `engine` key."""
    method: dict[str, Any] = {"name": "hnsw", "space_type": "cosinesimil"}
    if generation == "classic":
        method.update(engine="faiss", parameters={"m": 16, "ef_construction": 128})
    return method


def ensure_index(client: JsonClient, name: str, body: dict[str, Any]) -> None:
    """Create the index unless it exists (a concurrent creator winning the race is not an error)."""
    status, _ = client.call("HEAD", f"/{name}", operation="describe_index", accept=(404,))
    if status == 404:
        status, answer = client.call("PUT", f"/{name}", body, operation="create_index", accept=(400,))
        if status == 400 and "already_exists" not in str((answer or {}).get("error", {}).get("type", "")):
            raise index_failure(status, answer, operation="create_index")


def lookup_ids(client: JsonClient, name: str, filters: list[dict[str, Any]], sort_field: str) -> Iterator[str]:
    """The `_id`s of every document matching the filters, paged by search_after (none if the index is missing)."""
    search_after: list[Any] | None = None
    while True:
        body: dict[str, Any] = {"size": LOOKUP_PAGE, "_source": False, "sort": [{sort_field: "asc"}],
                                "query": {"bool": {"filter": filters}}}
        if search_after is not None:
            body["search_after"] = search_after
        status, found = client.call("POST", f"/{name}/_search", body, operation="lookup", accept=(404,))
        if is_index_missing(status, found):
            return
        hits = found["hits"]["hits"]
        yield from (h["_id"] for h in hits)
        if len(hits) < LOOKUP_PAGE:
            return
        search_after = hits[-1]["sort"]


def bulk(client: JsonClient, name: str, lines: list[dict[str, Any]]) -> None:
    """Bulk with per-item retries: only the items that failed with 429/5xx are sent again (a 404 delete is done).

    `lines` may mix actions: a `delete` is one line, an `index` is two (action + document).
    """
    pending = lines
    for _ in range(BULK_ROUNDS):
        _, result = client.call("POST", f"/{name}/_bulk", ndjson(pending), operation="bulk")
        if not result.get("errors"):
            return
        actions = _actions(pending)
        retry: list[dict[str, Any]] = []
        for (start, end), item in zip(actions, result["items"], strict=False):
            outcome = next(iter(item.values()))
            status = int(outcome.get("status", 500))
            if status == 404 and "delete" in item:
                continue  # already gone
            if status >= 300:
                if status not in RETRYABLE_STATUSES:
                    raise index_failure(status, outcome, operation="bulk")
                retry.extend(pending[start:end])
        if not retry:
            return
        pending = retry
        client.sleep(client.backoff(1))
    raise index_throttled("bulk")


def _actions(lines: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(start, end) line positions of each bulk action, in order."""
    spans: list[tuple[int, int]] = []
    position = 0
    while position < len(lines):
        width = 1 if "delete" in lines[position] else 2
        spans.append((position, position + width))
        position += width
    return spans
