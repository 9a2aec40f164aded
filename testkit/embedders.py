"""Embedder doubles of two embedding profiles, and a registry of them (issue 25: `kb reindex` to another profile).

`HashedEmbedder` is the feature-hashed model the Bedrock double answers (testkit/bedrock.py) under any model id
and dimension; a `salt` stands for another vector space under the same id. `Embedders` is the EmbedderRegistry
port over a fixed set of them, as a test registers the profiles its deployment can build."""

from __future__ import annotations

from collections.abc import Sequence

from testkit.bedrock import hashed_embedding

TITAN_V2 = "amazon.titan-embed-text-v2:0"


class HashedEmbedder:
    def __init__(self, salt: str = "", model_id: str = TITAN_V2, dimension: int = 256) -> None:
        self.salt, self.model_id, self.dimension = salt, model_id, dimension
        self.calls = 0

    def embed_query(self, text: str) -> list[float]:
        return hashed_embedding(self.salt + text, self.dimension)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        return [hashed_embedding(self.salt + t, self.dimension) for t in texts]


class Embedders:
    """EmbedderRegistry port over the given embedders (a model's first one is its default dimension)."""

    def __init__(self, *embedders: HashedEmbedder) -> None:
        self.embedders = embedders

    def embedder_for(self, model: str, dimension: int | None = None) -> HashedEmbedder | None:
        return next((e for e in self.embedders if e.model_id == model and dimension in (None, e.dimension)), None)
