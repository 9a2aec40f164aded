"""Issue 25: a query is embedded by the embedder of its knowledge base's profile: the configured one when it matches,
else one the deployment's registry builds for that profile, else 503 (services/search/profiles.py)."""

from __future__ import annotations

import pytest

from agentkb.adapters.embedded.embedder import DIMENSION, MODEL_ID, LocalEmbedders
from agentkb.errors import ServiceUnavailable
from agentkb.models.domain import EmbeddingProfile
from agentkb.services.search.profiles import embedder_for
from testkit.embedders import Embedders, HashedEmbedder

CONFIGURED = HashedEmbedder(dimension=1024)
AT_512 = HashedEmbedder(salt="512:", dimension=512)


def test_the_configured_embedder_answers_for_its_own_profile() -> None:
    assert embedder_for(CONFIGURED, Embedders(AT_512), EmbeddingProfile(CONFIGURED.model_id, 1024)) is CONFIGURED


def test_the_registry_answers_for_another_profile() -> None:
    assert embedder_for(CONFIGURED, Embedders(AT_512), EmbeddingProfile(AT_512.model_id, 512)) is AT_512


@pytest.mark.parametrize("registry", [None, Embedders(), Embedders(AT_512)])
def test_a_profile_nobody_builds_is_503(registry: Embedders | None) -> None:
    with pytest.raises(ServiceUnavailable) as refused:
        embedder_for(CONFIGURED, registry, EmbeddingProfile(CONFIGURED.model_id, 256))
    assert refused.value.details == {"embeddingModel": CONFIGURED.model_id, "dimension": 256}


def test_a_registry_answering_another_dimension_is_not_trusted() -> None:
    class Sloppy:
        def embedder_for(self, model: str, dimension: int | None = None) -> HashedEmbedder:
            return AT_512

    with pytest.raises(ServiceUnavailable):
        embedder_for(CONFIGURED, Sloppy(), EmbeddingProfile(CONFIGURED.model_id, 256))


def test_the_embedded_registry_builds_the_local_model_only() -> None:
    registry = LocalEmbedders()
    assert registry.embedder_for(MODEL_ID, 512) is None
    assert registry.embedder_for("amazon.titan-embed-text-v2:0") is None
    # (building the local model itself loads nothing until its first embedding)
    local = registry.embedder_for(MODEL_ID, DIMENSION)
    assert local is not None and (local.model_id, local.dimension) == (MODEL_ID, DIMENSION)
