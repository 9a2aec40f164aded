"""The v2 search request, exactly: additionalProperties false, limits, strict types."""

import pytest
from pydantic import ValidationError

from agentkb.models.search import KnowledgeSearchRequest

BASE = {"workspaceId": "ws", "knowledgeBaseIds": ["kb"], "query": "q"}


@pytest.mark.parametrize("top_k", [1, 100, 5.0])
def test_top_k_whole_numbers_1_to_100(top_k: float) -> None:
    assert KnowledgeSearchRequest.model_validate({**BASE, "topK": top_k}).topK == int(top_k)


@pytest.mark.parametrize("top_k", [0, 101, 5.5, "5", True, None])
def test_top_k_rejections(top_k: object) -> None:
    with pytest.raises(ValidationError):
        KnowledgeSearchRequest.model_validate({**BASE, "topK": top_k})


@pytest.mark.parametrize("patch", [
    {"extra": 1}, {"workspaceId": ""}, {"workspaceId": "x" * 129}, {"knowledgeBaseIds": []},
    {"knowledgeBaseIds": [f"kb{i}" for i in range(21)]}, {"knowledgeBaseIds": ""}, {"knowledgeBaseIds": [""]},
    {"query": "x" * 32769}, {"query": 5}, {"searchMode": "lexical"}, {"rerankerModel": "other"},
    {"rerankerInputCount": 0}, {"rerankerInputCount": 101}, {"rerankerEnabled": "yes"},
    {"tagFilters": [{"tagName": "t", "value": "v"}] * 11}, {"tagFilters": [{"tagName": "t"}]},
    {"tagFilters": [{"tagName": "t", "value": "v", "operator": "like"}]},
    {"tagFilters": [{"tagName": "t", "value": "v", "extra": 1}]},
    {"tagFilters": [{"tagName": "t", "value": {"nested": 1}}]},
])
def test_invalid_requests(patch: dict) -> None:
    with pytest.raises(ValidationError):
        KnowledgeSearchRequest.model_validate({**BASE, **patch})


def test_defaults_and_id_normalisation() -> None:
    req = KnowledgeSearchRequest.model_validate({"workspaceId": "ws", "knowledgeBaseIds": "kb"})
    assert req.topK == 10 and req.rerankerModel == "rerank-v4.0-fast" and req.searchMode is None
    assert req.kb_ids() == ["kb"]
    req = KnowledgeSearchRequest.model_validate({**BASE, "knowledgeBaseIds": ["a", "b", "a"], "searchMode": None})
    assert req.kb_ids() == ["a", "b"]
    assert KnowledgeSearchRequest.model_validate({**BASE, "query": "x" * 32768}).query
