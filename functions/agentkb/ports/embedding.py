"""Ports of the text models: embedding, tokenising, reranking and the embedding cache."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.domain import RerankOutcome


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised vectors of one embedding profile."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_query(self, text: str) -> list[float]: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...


class EmbedderRegistry(Protocol):
    """The embedders a deployment can build besides its configured one (issue 25: a KB keeps answering on its own
    profile while, or until, it is re-embedded under another): Bedrock models on AWS from one client, the local
    model on the embedded engine, fakes in tests."""

    def embedder_for(self, model: str, dimension: int | None = None) -> Embedder | None:
        """An embedder of `model` at `dimension` (None: the model's default dimension), or None when this
        deployment cannot build one."""
        ...


class Tokenizer(Protocol):
    """Counts and splits text in the embedding model's tokens (chunking and token budgets)."""

    def count(self, text: str) -> int: ...

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character (start, end) of every token, in order, without special tokens."""
        ...


class Reranker(Protocol):
    def rerank(self, query: str, passages: Sequence[str], model: str) -> RerankOutcome: ...


@dataclass(frozen=True)
class CacheSweep:
    """What an embedding-cache sweep did: entries looked at, entries removed, entries given an expiry (AWS)."""

    examined: int
    removed: int = 0
    stamped: int = 0


class EmbeddingCache(Protocol):
    """Vectors by (profile key, content hash), so unchanged text is never embedded twice."""

    def get_many(self, profile_key: str, content_hashes: Sequence[str]) -> dict[str, list[float]]: ...

    def put_many(self, profile_key: str, vectors: dict[str, list[float]]) -> None: ...

    def sweep(self, now: float) -> CacheSweep:
        """Reclaim entries no chunk needs any more (embedded: removed; DynamoDB: given their expiry)."""
        ...
