"""Bedrock adapters with botocore Stubber (request shapes, success, throttling) and timeouts; the AWS tokenizer."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from agentkb.adapters.aws.bedrock import TITAN_V2, BedrockEmbedder, BedrockEmbedders, BedrockReranker
from agentkb.adapters.aws.tokenizer import ApproximateTokenizer
from agentkb.config import ConfigurationError
from agentkb.errors import EmbeddingUnavailable
from agentkb.services.ingest.chunking import chunk_text

REGION = "us-east-1"
RERANK_ARN = f"arn:aws:bedrock:{REGION}::foundation-model/cohere.rerank-v3-5:0"


def _body(payload: dict[str, Any]) -> StreamingBody:
    raw = json.dumps(payload).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


@pytest.fixture()
def runtime() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("bedrock-runtime", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


@pytest.fixture()
def agent_runtime() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("bedrock-agent-runtime", region_name=REGION, aws_access_key_id="x",
                          aws_secret_access_key="x")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def _titan_request(text: str, dims: int = 256) -> dict[str, Any]:
    return {"modelId": TITAN_V2, "contentType": "application/json", "accept": "application/json",
            "body": json.dumps({"inputText": text, "dimensions": dims, "normalize": True})}


def test_titan_embeds_with_the_configured_dimension_and_normalisation(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    vector = [0.0625] * 256
    stubber.add_response("invoke_model", {"body": _body({"embedding": vector, "inputTextTokenCount": 3}),
                                          "contentType": "application/json"}, _titan_request("hello world"))
    embedder = BedrockEmbedder(lambda: client, TITAN_V2, 256)
    assert embedder.embed_query("hello world") == vector
    assert (embedder.model_id, embedder.dimension) == (TITAN_V2, 256)


def test_the_registry_builds_titan_at_each_of_its_dimensions_over_one_client(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_response("invoke_model", {"body": _body({"embedding": [0.125] * 512}),
                                          "contentType": "application/json"}, _titan_request("q", 512))
    registry = BedrockEmbedders(lambda: client)
    at_512 = registry.embedder_for(TITAN_V2, 512)
    assert at_512 is not None and (at_512.model_id, at_512.dimension) == (TITAN_V2, 512)
    assert at_512.embed_query("q") == [0.125] * 512  # the request asked for 512 dimensions
    assert registry.embedder_for(TITAN_V2, 512) is at_512
    default = registry.embedder_for(TITAN_V2)
    assert default is not None and default.dimension == 1024
    assert registry.embedder_for(TITAN_V2, 384) is None
    assert registry.embedder_for("sentence-transformers/all-MiniLM-L6-v2") is None


def test_embed_documents_keeps_input_order(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    texts = ["a", "b", "c"]
    for i, text in enumerate(texts):
        stubber.add_response("invoke_model", {"body": _body({"embedding": [float(i)] * 256}),
                                              "contentType": "application/json"}, _titan_request(text))
    embedder = BedrockEmbedder(lambda: client, TITAN_V2, 256, max_concurrency=1)  # Stubber replays in order
    assert [v[0] for v in embedder.embed_documents(texts)] == [0.0, 1.0, 2.0]


def test_throttling_is_slot_exhausted(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_client_error("invoke_model", service_error_code="ThrottlingException", http_status_code=429)
    with pytest.raises(EmbeddingUnavailable) as caught:
        BedrockEmbedder(lambda: client, TITAN_V2, 256).embed_query("q")
    assert caught.value.code == "slot_exhausted" and caught.value.retryable


def test_validation_errors_are_embedding_failed(runtime: tuple[Any, Stubber]) -> None:
    client, stubber = runtime
    stubber.add_client_error("invoke_model", service_error_code="ValidationException", http_status_code=400)
    with pytest.raises(EmbeddingUnavailable) as caught:
        BedrockEmbedder(lambda: client, TITAN_V2, 256).embed_query("q")
    assert caught.value.code == "embedding_failed"


def test_timeouts_are_timeout() -> None:
    class Slow:
        def invoke_model(self, **_: Any) -> None:
            raise ReadTimeoutError(endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com")

    with pytest.raises(EmbeddingUnavailable) as caught:
        BedrockEmbedder(lambda: Slow(), TITAN_V2, 512).embed_query("q")
    assert caught.value.code == "timeout"


def test_titan_refuses_unsupported_dimensions() -> None:
    with pytest.raises(ConfigurationError):
        BedrockEmbedder(lambda: None, TITAN_V2, 384)


def _rerank_request(query: str, passages: list[str]) -> dict[str, Any]:
    return {"queries": [{"type": "TEXT", "textQuery": {"text": query}}],
            "sources": [{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": p}}}
                        for p in passages],
            "rerankingConfiguration": {"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
                "modelConfiguration": {"modelArn": RERANK_ARN}, "numberOfResults": len(passages)}}}


def test_rerank_v35_scores_align_with_the_input_order(agent_runtime: tuple[Any, Stubber]) -> None:
    client, stubber = agent_runtime
    passages = ["first", "second", "third"]
    stubber.add_response("rerank", {"results": [{"index": 2, "relevanceScore": 0.9},
                                                {"index": 0, "relevanceScore": 0.4},
                                                {"index": 1, "relevanceScore": 0.1}]},
                         _rerank_request("q", passages))
    outcome = BedrockReranker(lambda: client, REGION, RERANK_ARN).rerank("q", passages, "rerank-v3.5")
    assert (outcome.status, outcome.scores) == ("applied", [0.4, 0.1, 0.9])


def test_rerank_v4_is_honestly_unavailable_on_bedrock() -> None:
    outcome = BedrockReranker(lambda: None, REGION, RERANK_ARN).rerank("q", ["p"], "rerank-v4.0-fast")
    assert outcome.status == "unavailable" and "not offered on Amazon Bedrock" in (outcome.reason or "")


def test_rerank_throttling_and_timeouts_are_unavailable(agent_runtime: tuple[Any, Stubber]) -> None:
    client, stubber = agent_runtime
    stubber.add_client_error("rerank", service_error_code="ThrottlingException", http_status_code=429)
    outcome = BedrockReranker(lambda: client, REGION, RERANK_ARN).rerank("q", ["p"], "rerank-v3.5")
    assert outcome.status == "unavailable" and "throttled" in (outcome.reason or "")

    class Slow:
        def rerank(self, **_: Any) -> None:
            raise ReadTimeoutError(endpoint_url="https://bedrock-agent-runtime.us-east-1.amazonaws.com")

    outcome = BedrockReranker(lambda: Slow(), REGION, RERANK_ARN).rerank("q", ["p"], "rerank-v3.5")
    assert outcome.status == "unavailable" and "timed out" in (outcome.reason or "")


def test_approximate_tokenizer_spans_words_punctuation_and_long_word_pieces() -> None:
    tok = ApproximateTokenizer()
    text = "Rotate credentials, now!"
    spans = tok.spans(text)
    assert [text[a:b] for a, b in spans] == ["Rotate", "creden", "tials", ",", "now", "!"]
    assert tok.count(text) == 6 and tok.count("") == 0
    chunks = chunk_text("word " * 500, tok, 200, 40)  # the chunker runs on it unchanged
    assert len(chunks) == 3 and all(c.token_count <= 200 for c in chunks)
