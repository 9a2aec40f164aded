"""Which embedder embeds a query for a knowledge base: the one made for its embedding profile (issue 25).

The configured embedder when its profile is the KB's, else one the deployment's registry builds for that profile
(a KB not yet re-embedded under a new model, or one switched to a profile other than the configured one)."""

from __future__ import annotations

from agentkb.errors import ServiceUnavailable
from agentkb.models.domain import EmbeddingProfile
from agentkb.ports.embedding import Embedder, EmbedderRegistry


def matches(embedder: Embedder, profile: EmbeddingProfile) -> bool:
    return embedder.model_id == profile.model and embedder.dimension == profile.dimension


def embedder_for(configured: Embedder, registry: EmbedderRegistry | None, profile: EmbeddingProfile) -> Embedder:
    """The embedder of `profile`; 503 when this deployment has none."""
    if matches(configured, profile):
        return configured
    other = registry.embedder_for(profile.model, profile.dimension) if registry is not None else None
    if other is None or not matches(other, profile):
        raise ServiceUnavailable("No embedder for this knowledge base's embedding profile is configured",
                                 details={"embeddingModel": profile.model, "dimension": profile.dimension})
    return other
