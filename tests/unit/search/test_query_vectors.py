"""The per-model query embedding cache: repeated texts skip the model, bounded, per embedder."""

from __future__ import annotations

from agentkb.services.search.query_vectors import QueryVectorCache


class CountingEmbedder:
    def __init__(self, model_id: str = "m", dimension: int = 2) -> None:
        self.model_id, self.dimension, self.calls = model_id, dimension, 0

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return [float(len(text)), 1.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]


def test_a_repeated_query_is_embedded_once() -> None:
    cache, embedder = QueryVectorCache(), CountingEmbedder()
    assert cache.embed(embedder, "vpn") == cache.embed(embedder, "vpn") == [3.0, 1.0]
    assert embedder.calls == 1


def test_the_cache_is_bounded_and_forgets_the_least_recently_used() -> None:
    cache, embedder = QueryVectorCache(capacity=2), CountingEmbedder()
    cache.embed(embedder, "a")
    cache.embed(embedder, "b")
    cache.embed(embedder, "a")  # a is now the most recent
    cache.embed(embedder, "c")  # evicts b
    calls = embedder.calls
    cache.embed(embedder, "a")
    assert embedder.calls == calls
    cache.embed(embedder, "b")
    assert embedder.calls == calls + 1


def test_models_and_embedders_do_not_share_vectors() -> None:
    cache = QueryVectorCache()
    first, other_model, same_model_again = CountingEmbedder("m1"), CountingEmbedder("m2"), CountingEmbedder("m1")
    for embedder in (first, other_model, same_model_again):
        cache.embed(embedder, "query")
    assert (first.calls, other_model.calls, same_model_again.calls) == (1, 1, 1)
