"""Bedrock: Titan Text Embeddings v2 (Embedder) and Cohere Rerank 3.5 through bedrock-agent-runtime (Reranker)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentkb.adapters.aws.errors import embedding_failure, rerank_failure_reason
from agentkb.config import ConfigurationError
from agentkb.models.domain import RerankOutcome

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_DIMENSIONS = (256, 512, 1024)
TITAN_MAX_CHARS = 50_000  # the model refuses longer inputs (8k tokens)
MAX_CONCURRENCY = 8  # per Lambda: keeps a burst of chunks inside the account's invocations-per-minute quota
# The API's rerankerModel values -> Bedrock model ids. Cohere's v4.0 rerankers are not offered on Bedrock.
RERANK_MODELS = {"rerank-v3.5": "cohere.rerank-v3-5:0"}


class BedrockEmbedder:
    """Embedder port on Titan v2: L2-normalised vectors (`normalize: true`) of 256, 512 or 1024 dimensions."""

    def __init__(self, client: Callable[[], Any], model_id: str = TITAN_V2, dimension: int = 1024,
                 max_concurrency: int = MAX_CONCURRENCY) -> None:
        if model_id == TITAN_V2 and dimension not in TITAN_DIMENSIONS:
            raise ConfigurationError(f"{TITAN_V2} embeds in {TITAN_DIMENSIONS} dimensions, not {dimension}")
        self._client = client
        self._model_id = model_id
        self._dimension = dimension
        self.max_concurrency = max_concurrency

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def _invoke(self, text: str) -> list[float]:
        body = json.dumps({"inputText": text[:TITAN_MAX_CHARS], "dimensions": self._dimension, "normalize": True})
        try:
            response = self._client().invoke_model(modelId=self._model_id, body=body,
                                                   contentType="application/json", accept="application/json")
            vector = json.loads(response["body"].read())["embedding"]
        except Exception as exc:
            raise embedding_failure(exc) from exc
        if not isinstance(vector, list) or len(vector) != self._dimension:
            raise embedding_failure(ValueError("unexpected embedding shape"))
        return [float(v) for v in vector]

    def embed_query(self, text: str) -> list[float]:
        return self._invoke(text)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One request per text (Titan v2 has no batch input), at most `max_concurrency` in flight, input order."""
        if len(texts) <= 1:
            return [self._invoke(t) for t in texts]
        with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(texts))) as pool:
            return list(pool.map(self._invoke, texts))



class BedrockEmbedders:
    """EmbedderRegistry port on Bedrock: Titan Text Embeddings v2 at any of its dimensions, over one client (a KB
    embedded at 512-d keeps answering in a deployment configured for 1024-d, and `kb reindex` moves it)."""

    def __init__(self, client: Callable[[], Any]) -> None:
        self._client = client
        self._built: dict[tuple[str, int], BedrockEmbedder] = {}

    def embedder_for(self, model: str, dimension: int | None = None) -> BedrockEmbedder | None:
        dimension = dimension or 1024
        if model != TITAN_V2 or dimension not in TITAN_DIMENSIONS:
            return None
        return self._built.setdefault((model, dimension), BedrockEmbedder(self._client, model, dimension))

class BedrockReranker:
    """Reranker port on bedrock-agent-runtime `rerank`; anything it cannot serve is reported `unavailable`."""

    def __init__(self, client: Callable[[], Any], region: str | None, model_arn: str | None = None) -> None:
        self._client = client
        self.region = region
        self.model_arn = model_arn

    def _arn(self, model_id: str) -> str:
        if self.model_arn and self.model_arn.endswith(f"/{model_id}"):
            return self.model_arn
        return f"arn:aws:bedrock:{self.region}::foundation-model/{model_id}"

    def rerank(self, query: str, passages: Sequence[str], model: str) -> RerankOutcome:
        model_id = RERANK_MODELS.get(model)
        if model_id is None:
            return RerankOutcome("unavailable", reason=f"{model} is not offered on Amazon Bedrock; use rerank-v3.5")
        if not passages:
            return RerankOutcome("skipped", reason="nothing to rerank")
        request: dict[str, Any] = {
            "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
            "sources": [{"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": p}}}
                        for p in passages],
            "rerankingConfiguration": {"type": "BEDROCK_RERANKING_MODEL", "bedrockRerankingConfiguration": {
                "modelConfiguration": {"modelArn": self._arn(model_id)}, "numberOfResults": len(passages)}},
        }
        scores = [0.0] * len(passages)
        try:
            while True:
                response = self._client().rerank(**request)
                for result in response.get("results", []):
                    scores[int(result["index"])] = float(result["relevanceScore"])
                if not response.get("nextToken"):
                    break
                request["nextToken"] = response["nextToken"]
        except Exception as exc:
            return RerankOutcome("unavailable", reason=rerank_failure_reason(exc))
        return RerankOutcome("applied", scores)
