"""X-Search-Leg-Ranks on the AWS engine (moto + the OpenSearch and Bedrock doubles): the same ranks as embedded."""

from __future__ import annotations

import json

from testkit.aws_backend import AwsBackend
from tests.handlers.test_search_leg_ranks import BASES, DOCS
from tests.helpers import body_of, invoke, response_headers, rest_event


def test_hybrid_and_vector_hits_carry_their_leg_ranks(aws_backend: AwsBackend) -> None:
    key = aws_backend.key(["ws1"], ["api:read", "api:write"])
    kb = body_of(invoke("ingest", rest_event("POST", BASES, {"workspaceId": "ws1", "name": "help"}, key=key)))
    kb_id = kb["data"]["id"]
    for name, content in DOCS.items():
        response = invoke("ingest", rest_event("POST", f"{BASES}/{kb_id}/documents",
                                               {"workspaceId": "ws1", "name": name, "content": content}, key=key))
        assert response["statusCode"] == 201, body_of(response)
    for mode in ("hybrid", "vector"):
        response = invoke("search", rest_event("POST", "/api/v2/knowledge/search", {
            "workspaceId": "ws1", "knowledgeBaseIds": [kb_id], "query": "reset password", "topK": 3,
            "searchMode": mode}, key=key))
        assert response["statusCode"] == 200, body_of(response)
        results = body_of(response)["data"]["results"]
        ranks = json.loads(response_headers(response)["x-search-leg-ranks"])
        assert len(ranks) == len(results) and all(r["vector"] for r in ranks)
        if mode == "hybrid":
            assert results[0]["documentName"] == "reset.md" and ranks[0]["bm25"] == 1
        else:
            assert {r["bm25"] for r in ranks} == {None}
