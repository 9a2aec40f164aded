"""Settings: the only reader of os.environ. Names and ARNs only, never secret values."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

ENV_PREFIX = "AGENTKB_"
MAX_BODY_BYTES = 2 * 1024 * 1024


class ConfigurationError(RuntimeError):
    """Invalid configuration: fails the cold start loudly."""


class Settings(BaseModel):
    """Runtime settings of every function, read from AGENTKB_* environment variables."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    backend: Literal["embedded", "aws"] = "embedded"
    data_dir: Path = Path(".agentkb")
    rate_limit_per_minute: int = Field(default=600, ge=1, le=1_000_000)
    default_search_mode: Literal["vector", "hybrid"] = "hybrid"
    max_body_bytes: int = Field(default=MAX_BODY_BYTES, ge=1024)
    embedding_model: str | None = None
    embedding_dimension: int | None = Field(default=None, ge=1, le=4096)
    embed_timeout_ms: int = Field(default=5000, ge=1)
    log_level: str = "INFO"
    # AWS backend (set by the CDK stack)
    region: str | None = None
    opensearch_endpoint: str | None = None
    opensearch_generation: Literal["classic", "nextgen"] = "classic"
    opensearch_index_prefix: str = "agentkb"
    catalog_table: str | None = None
    memory_table: str | None = None
    graph_table: str | None = None
    snapshot_table: str | None = None
    keys_table: str | None = None
    rate_limit_table: str | None = None
    idempotency_table: str | None = None
    bucket: str | None = None
    secret_arn: str | None = None
    ingest_queue_url: str | None = None
    rerank_model_arn: str | None = None
    # OAuth 2.0 / OIDC bearer tokens (services/identity/): off unless an issuer is set
    oidc_issuer: str | None = None
    oidc_audience: str | None = None
    oidc_workspaces_claim: str = Field(default="workspaces", min_length=1, max_length=128)
    oidc_scope_prefix: str = Field(default="", max_length=256)  # Cognito: "<resource server id>/"
    # The console's own sign-in with that issuer (authorization code + PKCE): a public client, never a secret
    oidc_console_client_id: str | None = Field(default=None, min_length=1, max_length=256)
    oidc_console_name: str | None = Field(default=None, min_length=1, max_length=64)  # "Sign in with <name>"
    oidc_console_scope: str | None = Field(default=None, min_length=1, max_length=1024)  # what it asks for

    @model_validator(mode="after")
    def _oidc_complete(self) -> Settings:
        if self.oidc_issuer is None:
            if self.oidc_console_client_id is not None:
                raise ValueError("AGENTKB_OIDC_CONSOLE_CLIENT_ID needs AGENTKB_OIDC_ISSUER")
            return self
        if not https_or_loopback(self.oidc_issuer):
            raise ValueError("AGENTKB_OIDC_ISSUER must be an https:// URL (http:// only on a loopback host)")
        if not self.oidc_audience:
            raise ValueError("AGENTKB_OIDC_AUDIENCE is required with AGENTKB_OIDC_ISSUER")
        return self

    @property
    def database_path(self) -> Path:
        return self.data_dir / "agentkb.sqlite3"


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def https_or_loopback(url: str) -> bool:
    """An identity provider's URL (issuer, jwks_uri): https, or http on a loopback host (the dev issuer)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if not parts.hostname or parts.username or parts.password or parts.fragment:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS)


def _from_environ(environ: dict[str, str]) -> dict[str, str]:
    values = {
        name[len(ENV_PREFIX):].lower(): value
        for name, value in environ.items()
        if name.startswith(ENV_PREFIX) and value != ""
    }
    if "region" not in values and environ.get("AWS_REGION"):
        values["region"] = environ["AWS_REGION"]
    known = set(Settings.model_fields)
    return {k: v for k, v in values.items() if k in known}


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings; invalid values raise ConfigurationError."""
    try:
        return Settings.model_validate(_from_environ(dict(os.environ)))
    except ValidationError as exc:
        raise ConfigurationError(f"invalid agentkb configuration: {exc}") from exc


def tracing_enabled() -> bool:
    """Powertools' own rule: X-Ray tracing runs only inside Lambda and unless POWERTOOLS_TRACE_DISABLED is set."""
    disabled = os.environ.get("POWERTOOLS_TRACE_DISABLED", "false").strip().lower() in ("1", "true", "yes", "on")
    emulated = bool(os.environ.get("AWS_SAM_LOCAL") or os.environ.get("AWS_CHALICE_CLI_MODE"))
    return bool(os.environ.get("LAMBDA_TASK_ROOT")) and not disabled and not emulated


def metrics_enabled() -> bool:
    """False when POWERTOOLS_METRICS_DISABLED is set (local runs, tests, benchmarks)."""
    return os.environ.get("POWERTOOLS_METRICS_DISABLED", "false").strip().lower() not in ("1", "true", "yes", "on")


def reset_settings() -> None:
    """Forget the cached settings (tests and the CLI's --data-dir)."""
    get_settings.cache_clear()


def client_api_key() -> str | None:
    """AGENTKB_KEY: the API key a client command (`agentkb mcp`) presents; a secret, so never part of Settings."""
    return os.environ.get("AGENTKB_KEY", "").strip() or None


def client_api_url() -> str | None:
    """AGENTKB_URL: the agentkb API a client command (`agentkb search`) asks first (default: agentkb serve's)."""
    return os.environ.get("AGENTKB_URL", "").strip() or None
