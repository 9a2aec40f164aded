"""Settings: the only reader of os.environ. Names and ARNs only, never secret values.

A frozen dataclass checked by hand, not a pydantic model: every function builds it in its cold start, where a
25-field pydantic model cost about 8 ms to create and validate (bench/coldstart.py; README Decisions).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

ENV_PREFIX = "AGENTKB_"
MAX_BODY_BYTES = 2 * 1024 * 1024


class ConfigurationError(RuntimeError):
    """Invalid configuration: fails the cold start loudly."""


@dataclass(frozen=True)
class Settings:
    """Runtime settings of every function, read from AGENTKB_* environment variables."""

    backend: Literal["embedded", "aws"] = "embedded"
    data_dir: Path = Path(".agentkb")
    rate_limit_per_minute: int = 600
    default_search_mode: Literal["vector", "hybrid"] = "hybrid"
    max_body_bytes: int = MAX_BODY_BYTES
    embedding_model: str | None = None
    embedding_dimension: int | None = None
    embed_timeout_ms: int = 5000
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

    def __post_init__(self) -> None:
        problems = [f"{name}: must be one of {', '.join(allowed)}" for name, allowed in _CHOICES.items()
                    if getattr(self, name) not in allowed]
        for name, (low, high) in _INT_RANGES.items():
            value = getattr(self, name)
            if value is None and name in _OPTIONAL_INTS:
                continue
            if not isinstance(value, int) or isinstance(value, bool):
                problems.append(f"{name}: must be an integer")
            elif value < low or (high is not None and value > high):
                problems.append(f"{name}: must be >= {low}" + ("" if high is None else f" and <= {high}"))
        if not isinstance(self.data_dir, Path):
            problems.append("data_dir: must be a path")
        if problems:
            raise ConfigurationError("invalid agentkb configuration: " + "; ".join(problems))

    @property
    def database_path(self) -> Path:
        return self.data_dir / "agentkb.sqlite3"

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)


_CHOICES = {"backend": ("embedded", "aws"), "default_search_mode": ("vector", "hybrid"),
            "opensearch_generation": ("classic", "nextgen")}
_INT_RANGES: dict[str, tuple[int, int | None]] = {
    "rate_limit_per_minute": (1, 1_000_000), "max_body_bytes": (1024, None), "embedding_dimension": (1, 4096),
    "embed_timeout_ms": (1, None)}
_OPTIONAL_INTS = frozenset({"embedding_dimension"})
_FIELDS = frozenset(f.name for f in dataclasses.fields(Settings))


def _typed(name: str, raw: str) -> Any:
    if name in _INT_RANGES:
        try:
            return int(raw.strip())
        except ValueError:
            raise ConfigurationError(f"invalid agentkb configuration: {name}: must be an integer") from None
    return Path(raw) if name == "data_dir" else raw


def _from_environ(environ: dict[str, str]) -> dict[str, Any]:
    values = {
        name[len(ENV_PREFIX):].lower(): value
        for name, value in environ.items()
        if name.startswith(ENV_PREFIX) and value != ""
    }
    if "region" not in values and environ.get("AWS_REGION"):
        values["region"] = environ["AWS_REGION"]
    return {k: _typed(k, v) for k, v in values.items() if k in _FIELDS}


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings; invalid values raise ConfigurationError."""
    return Settings(**_from_environ(dict(os.environ)))


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
