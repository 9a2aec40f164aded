"""Context settings: defaults, parsing of CLI strings, validation."""

from __future__ import annotations

import pytest

from infra.app import new_app
from infra.config import DeploymentConfig


def config(**context: object) -> DeploymentConfig:
    return DeploymentConfig.from_node(new_app(context=context).node)


def test_defaults():
    cfg = config()
    assert (cfg.stage, cfg.generation, cfg.standby_replicas) == ("dev", "classic", True)
    assert (cfg.embedding_model, cfg.embedding_dimension) == ("amazon.titan-embed-text-v2:0", 1024)
    assert cfg.api_key_required is False and cfg.retain_data is True


def test_cli_strings_are_parsed():
    cfg = config(standbyReplicas="false", embeddingDimension="512", throttleRateLimit="7", apiKeyRequired="true",
                 collectionGeneration="NextGen")
    assert (cfg.standby_replicas, cfg.embedding_dimension, cfg.throttle_rate) == (False, 512, 7)
    assert cfg.api_key_required is True and cfg.generation == "nextgen"


@pytest.mark.parametrize("context", [{"stage": "Prod"}, {"stage": "a-very-long-stage-name"},
                                     {"collectionGeneration": "v3"}, {"embeddingDimension": "0"}])
def test_invalid_settings_fail_fast(context):
    with pytest.raises(ValueError):
        config(**context)
