"""Settings from AGENTKB_* variables: typed, checked, and loud when invalid (a failed cold start, not a bad run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkb.config import ConfigurationError, Settings, _from_environ


def settings(**environ: str) -> Settings:
    return Settings(**_from_environ(environ))


def test_defaults_without_any_variable() -> None:
    s = settings()
    assert (s.backend, s.data_dir, s.rate_limit_per_minute, s.default_search_mode) == (
        "embedded", Path(".agentkb"), 600, "hybrid")
    assert s.max_body_bytes == 2 * 1024 * 1024 and s.embedding_dimension is None
    assert s.database_path == Path(".agentkb") / "agentkb.sqlite3"


def test_variables_are_typed_and_unknown_or_empty_ones_ignored() -> None:
    s = settings(AGENTKB_BACKEND="aws", AGENTKB_DATA_DIR="/tmp/kb", AGENTKB_RATE_LIMIT_PER_MINUTE=" 42 ",
                 AGENTKB_EMBEDDING_DIMENSION="256", AGENTKB_OPENSEARCH_GENERATION="nextgen",
                 AGENTKB_CATALOG_TABLE="t-catalog", AGENTKB_NOT_A_SETTING="x", AGENTKB_REGION="",
                 AWS_REGION="eu-west-1", OTHER="y")
    assert (s.backend, s.data_dir, s.rate_limit_per_minute, s.embedding_dimension) == (
        "aws", Path("/tmp/kb"), 42, 256)
    assert (s.opensearch_generation, s.catalog_table, s.region) == ("nextgen", "t-catalog", "eu-west-1")


@pytest.mark.parametrize(("name", "value", "message"), [
    ("AGENTKB_BACKEND", "azure", "backend: must be one of embedded, aws"),
    ("AGENTKB_DEFAULT_SEARCH_MODE", "lexical", "default_search_mode: must be one of vector, hybrid"),
    ("AGENTKB_OPENSEARCH_GENERATION", "v3", "opensearch_generation"),
    ("AGENTKB_RATE_LIMIT_PER_MINUTE", "0", "rate_limit_per_minute: must be >= 1 and <= 1000000"),
    ("AGENTKB_RATE_LIMIT_PER_MINUTE", "ten", "rate_limit_per_minute: must be an integer"),
    ("AGENTKB_MAX_BODY_BYTES", "100", "max_body_bytes: must be >= 1024"),
    ("AGENTKB_EMBEDDING_DIMENSION", "8192", "embedding_dimension: must be >= 1 and <= 4096"),
    ("AGENTKB_EMBED_TIMEOUT_MS", "1.5", "embed_timeout_ms: must be an integer"),
])
def test_invalid_values_fail_loudly_naming_the_setting(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigurationError, match="invalid agentkb configuration: .*" + message.split(":")[0]) as err:
        settings(**{name: value})
    assert message in str(err.value)


def test_settings_are_frozen_and_replace_checks_again() -> None:
    s = settings()
    with pytest.raises(AttributeError):
        s.backend = "aws"  # type: ignore[misc]
    assert s.replace(embed_timeout_ms=50).embed_timeout_ms == 50
    with pytest.raises(ConfigurationError, match="embed_timeout_ms"):
        s.replace(embed_timeout_ms=0)
    with pytest.raises(ConfigurationError, match="rate_limit_per_minute: must be an integer"):
        Settings(rate_limit_per_minute=True)
