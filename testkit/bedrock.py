"""The Bedrock runtimes moto cannot serve (its invoke_model returns `{}`), answered deterministically: Titan Text
Embeddings v2 by a feature-hashed bag of words, Cohere Rerank 3.5 by word overlap."""

from __future__ import annotations

import hashlib
import io
import json
from typing import Any

from botocore.response import StreamingBody

from testkit.fake_opensearch import analyze


def hashed_embedding(text: str, dimension: int) -> list[float]:
    """Feature-hashed bag of words, L2-normalised: texts sharing words are close, and it never changes."""
    vector = [0.0] * dimension
    vector[0] = 0.05  # no text embeds to the zero vector
    for word in analyze(text):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dimension] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(v * v for v in vector) ** 0.5
    return [v / norm for v in vector]


def _streaming(payload: Any) -> StreamingBody:
    raw = json.dumps(payload).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


def titan_embedding(request: dict[str, Any]) -> dict[str, Any]:
    """Titan Text Embeddings v2's answer to an invoke_model body."""
    return {"embedding": hashed_embedding(request["inputText"], request["dimensions"]),
            "inputTextTokenCount": len(request["inputText"].split())}


class FakeBedrockRuntime:
    """invoke_model of Titan Text Embeddings v2 (titan_embedding); counts the calls."""

    def __init__(self) -> None:
        self.calls = 0

    def invoke_model(self, *, modelId: str, body: str, contentType: str, accept: str) -> dict[str, Any]:
        self.calls += 1
        request = json.loads(body)
        assert request["normalize"] is True
        return {"body": _streaming(titan_embedding(request))}


class FakeAgentRuntime:
    """rerank of Cohere Rerank 3.5: relevance = share of the query's words found in the passage."""

    def rerank(self, **request: Any) -> dict[str, Any]:
        query = set(analyze(request["queries"][0]["textQuery"]["text"]))
        results = []
        for position, source in enumerate(request["sources"]):
            words = set(analyze(source["inlineDocumentSource"]["textDocument"]["text"]))
            results.append({"index": position, "relevanceScore": len(query & words) / max(1, len(query))})
        return {"results": sorted(results, key=lambda r: -r["relevanceScore"])}
