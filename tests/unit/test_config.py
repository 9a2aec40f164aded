"""Settings from AGENTKB_* variables: typed, checked, and loud when invalid (a failed cold start, not a bad run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentkb.config import ConfigurationError, Settings, get_settings, reset_settings


@pytest.fixture
def environ(monkeypatch: pytest.MonkeyPatch):
    def apply(**values: str) -> Settings:
        for name in [n for n in os.environ if n.startswith("AGENTKB_") or n == "AWS_REGION"]:
            monkeypatch.delenv(name)
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        reset_settings()
        return get_settings()

    yield apply
    reset_settings()


def test_defaults_without_any_variable(environ) -> None:
    s = environ()
    assert (s.backend, s.data_dir, s.rate_limit_per_minute, s.default_search_mode) == (
        "embedded", Path(".agentkb"), 600, "hybrid")
    assert s.max_body_bytes == 2 * 1024 * 1024 and s.embedding_dimension is None
    assert s.database_path == Path(".agentkb") / "agentkb.sqlite3"


def test_variables_are_typed_and_unknown_or_empty_ones_ignored(environ) -> None:
    s = environ(AGENTKB_BACKEND="aws", AGENTKB_DATA_DIR="/tmp/kb", AGENTKB_RATE_LIMIT_PER_MINUTE="42",
                AGENTKB_EMBEDDING_DIMENSION="256", AGENTKB_OPENSEARCH_GENERATION="nextgen",
                AGENTKB_CATALOG_TABLE="t-catalog", AGENTKB_NOT_A_SETTING="x", AGENTKB_REGION="",
                AWS_REGION="eu-west-1")
    assert (s.backend, s.data_dir, s.rate_limit_per_minute, s.embedding_dimension) == (
        "aws", Path("/tmp/kb"), 42, 256)
    assert (s.opensearch_generation, s.catalog_table, s.region) == ("nextgen", "t-catalog", "eu-west-1")


@pytest.mark.parametrize(("name", "value", "field"), [
    ("AGENTKB_BACKEND", "azure", "backend"),
    ("AGENTKB_DEFAULT_SEARCH_MODE", "lexical", "default_search_mode"),
    ("AGENTKB_OPENSEARCH_GENERATION", "v3", "opensearch_generation"),
    ("AGENTKB_RATE_LIMIT_PER_MINUTE", "0", "rate_limit_per_minute"),
    ("AGENTKB_RATE_LIMIT_PER_MINUTE", "ten", "rate_limit_per_minute"),
    ("AGENTKB_MAX_BODY_BYTES", "100", "max_body_bytes"),
    ("AGENTKB_EMBEDDING_DIMENSION", "8192", "embedding_dimension"),
    ("AGENTKB_EMBED_TIMEOUT_MS", "1.5", "embed_timeout_ms"),
])
def test_invalid_values_fail_loudly_naming_the_setting(environ, name: str, value: str, field: str) -> None:
    with pytest.raises(ConfigurationError, match="invalid agentkb configuration") as err:
        environ(**{name: value})
    assert field in str(err.value)


def test_settings_are_frozen(environ) -> None:
    s = environ()
    with pytest.raises(Exception, match="frozen"):
        s.backend = "aws"  # type: ignore[misc]
