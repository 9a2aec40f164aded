"""The memory index DSL against a live OpenSearch Serverless collection (`make test-live`).

Only with AGENTKB_OPENSEARCH_ENDPOINT set (and AWS_REGION, AGENTKB_OPENSEARCH_GENERATION for NextGen, credentials
the data-access policy lets create indexes and write). Writes three memory documents into a fresh
`agentkb-contract-<random>-memories-4` index and waits out the refresh lag (up to 120 s) for the filtered kNN and
BM25 legs to answer with exactly the eligible ones. Delete the index afterwards.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from contract_engines import eventually

from agentkb.adapters.aws.opensearch.memory import OpenSearchMemoryIndex
from agentkb.models.memory.api import VISIBILITY_RANK
from agentkb.models.recall.api import RecallScope

pytestmark = [pytest.mark.live, pytest.mark.skipif(not os.environ.get("AGENTKB_OPENSEARCH_ENDPOINT"),
                                                   reason="AGENTKB_OPENSEARCH_ENDPOINT is not set")]
NOW = time.time()


def _document(memory_id: int, name: str, body: str, vector: list[float], **facets: object) -> dict[str, object]:
    base: dict[str, object] = {"memory_id": memory_id, "workspace_id": "ws-live", "name": name,
                               "description": f"about {name}", "body": body, "entity_ids": [], "vis_rank": 3,
                               "sensitivity": 0, "confirmed": 1, "stale": 0, "superseded": 0, "updated_at": NOW,
                               "owner_id": "alice", "embedding": vector}
    return {**base, **facets}


def test_live_memory_legs_apply_eligibility_inside_the_query() -> None:
    from agentkb.adapters.aws.opensearch.transport import JsonClient, SigV4Transport

    region = os.environ.get("AWS_REGION") or os.environ.get("AGENTKB_REGION") or "us-east-1"
    index = OpenSearchMemoryIndex(JsonClient(SigV4Transport(os.environ["AGENTKB_OPENSEARCH_ENDPOINT"], region),
                                             max_call_s=60.0),
                                  prefix=f"agentkb-contract-{uuid.uuid4().hex[:8]}",
                                  generation=os.environ.get("AGENTKB_OPENSEARCH_GENERATION", "classic"))
    index.replace(4, [
        _document(1, "billing-deploys", "billing deploys run on weekdays", [1.0, 0.0, 0.0, 0.0]),
        _document(2, "billing-old", "billing deploys ran on fridays", [0.9, 0.1, 0.0, 0.0], superseded=1),
        _document(3, "bob-notes", "billing deploy notes", [0.8, 0.2, 0.0, 0.0], vis_rank=0, owner_id="bob"),
        _document(4, "expired", "billing deploy plan", [0.7, 0.3, 0.0, 0.0], valid_until=NOW - 10)])
    scope = RecallScope("ws-live", VISIBILITY_RANK["personal"], "alice", None, None, False, False, False, NOW,
                        None, 0)
    stale_ok = RecallScope("ws-live", VISIBILITY_RANK["personal"], "alice", None, None, False, False, True, NOW,
                           None, 0)

    def check() -> None:
        assert [i for i, _ in index.knn(scope, [1.0, 0.0, 0.0, 0.0], 10)[0]] == [1]
        assert [i for i, _ in index.bm25(scope, "billing deploys", 4, 10)[0]] == [1]
        assert sorted(i for i, _ in index.knn(stale_ok, [1.0, 0.0, 0.0, 0.0], 10)[0]) == [1, 2, 4]

    eventually(check, 120.0)
