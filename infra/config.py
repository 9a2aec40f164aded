"""Deployment settings read from CDK context (cdk.json or `-c key=value`), validated once."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from aws_cdk import Aws
from constructs import Node

from infra import constants as c


def _flag(value: object) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"1", "true", "yes", "on", "enabled"}


def _reserved_concurrency(value: object) -> bool:
    """`default` keeps each function's reserved concurrency (constants.FUNCTIONS), `0` reserves none."""
    text = str(value).strip().lower()
    if text not in {"default", "0"}:
        raise ValueError(f"reservedConcurrency must be 'default' or '0', got {value!r}")
    return text == "default"


@dataclass(frozen=True)
class DeploymentConfig:
    """Everything a stack may vary by; defaults live in constants.DEFAULTS."""

    stage: str
    generation: str
    standby_replicas: bool
    embedding_model: str
    embedding_dimension: int
    rerank_model: str
    throttle_rate: int
    throttle_burst: int
    app_rate_limit_per_minute: int
    api_key_required: bool
    retain_data: bool
    alarm_topic_arn: str
    log_level: str
    skip_bundling: bool
    # False: no function reserves concurrency (an account whose concurrency quota is below 200, e.g. a new one)
    reserved_concurrency: bool = True
    # OAuth access tokens (functions/agentkb/services/identity): an external issuer, or Cognito made by the stack
    oidc_issuer: str = ""
    oidc_audience: str = ""
    oidc_workspaces_claim: str = "workspaces"
    oidc_scope_prefix: str = ""
    oidc_console_client_id: str = ""  # the web console's sign-in with that issuer (a public client: no secret)
    oidc_console_name: str = ""
    oidc_console_scope: str = ""
    cognito: bool = False
    cognito_workspaces: tuple[str, ...] = ()

    @property
    def prefix(self) -> str:
        return f"{c.SERVICE}-{self.stage}"

    @property
    def collection_name(self) -> str:
        return self.prefix

    @property
    def documents_bucket_name(self) -> str:
        """Deterministic, so the api stack can scope object ARNs without a cross-stack token."""
        return f"{self.prefix}-documents-{Aws.ACCOUNT_ID}-{Aws.REGION}"

    @property
    def documents_bucket_name_pattern(self) -> str:
        """The bucket name as cdk-nag renders it in findings."""
        return f"{self.prefix}-documents-<AWS::AccountId>-<AWS::Region>"

    @classmethod
    def from_node(cls, node: Node) -> DeploymentConfig:
        def get(key: str) -> object:
            value = node.try_get_context(key)
            return c.DEFAULTS[key] if value is None or value == "" else value

        config = cls(
            stage=str(get(c.CTX_STAGE)),
            generation=str(get(c.CTX_GENERATION)).lower(),
            standby_replicas=_flag(get(c.CTX_STANDBY)),
            embedding_model=str(get(c.CTX_EMBEDDING_MODEL)),
            embedding_dimension=int(str(get(c.CTX_EMBEDDING_DIMENSION))),
            rerank_model=str(get(c.CTX_RERANK_MODEL)),
            throttle_rate=int(str(get(c.CTX_THROTTLE_RATE))),
            throttle_burst=int(str(get(c.CTX_THROTTLE_BURST))),
            app_rate_limit_per_minute=int(str(get(c.CTX_APP_RATE_LIMIT))),
            api_key_required=_flag(get(c.CTX_API_KEY_REQUIRED)),
            retain_data=str(get(c.CTX_REMOVAL)).lower() != "destroy",
            alarm_topic_arn=str(node.try_get_context(c.CTX_ALARM_TOPIC) or ""),
            log_level=str(get(c.CTX_LOG_LEVEL)).upper(),
            skip_bundling=str(os.environ.get(c.ENV_BUNDLING) or get(c.CTX_BUNDLING)).lower() == "skip",
            reserved_concurrency=_reserved_concurrency(get(c.CTX_RESERVED_CONCURRENCY)),
            oidc_issuer=str(get(c.CTX_OIDC_ISSUER)).strip(),
            oidc_audience=str(get(c.CTX_OIDC_AUDIENCE)).strip(),
            oidc_workspaces_claim=str(get(c.CTX_OIDC_WORKSPACES_CLAIM)).strip(),
            oidc_scope_prefix=str(get(c.CTX_OIDC_SCOPE_PREFIX)).strip(),
            oidc_console_client_id=str(get(c.CTX_OIDC_CONSOLE_CLIENT_ID)).strip(),
            oidc_console_name=str(get(c.CTX_OIDC_CONSOLE_NAME)).strip(),
            oidc_console_scope=str(get(c.CTX_OIDC_CONSOLE_SCOPE)).strip(),
            cognito=_flag(get(c.CTX_COGNITO)),
            cognito_workspaces=tuple(w.strip() for w in str(get(c.CTX_COGNITO_WORKSPACES)).split(",") if w.strip()),
        )
        config.validate()
        return config

    def validate(self) -> None:
        if not re.match(c.STAGE_PATTERN, self.stage):
            raise ValueError(f"stage {self.stage!r} must match {c.STAGE_PATTERN}")
        if self.generation not in c.GENERATIONS:
            raise ValueError(f"collectionGeneration must be one of {c.GENERATIONS}, got {self.generation!r}")
        if not 1 <= self.embedding_dimension <= 4096:
            raise ValueError("embeddingDimension must be within 1..4096")
        if self.throttle_rate < 1 or self.throttle_burst < 1:
            raise ValueError("throttle limits must be positive")
        self._validate_tokens()

    def _validate_tokens(self) -> None:
        if self.cognito and self.oidc_issuer:
            raise ValueError("cognito=true makes the issuer: leave oidcIssuer and oidcAudience unset")
        if self.cognito and not self.cognito_workspaces:
            raise ValueError("cognito=true needs cognitoWorkspaces (the workspaces its tokens may reach)")
        if any(not re.fullmatch(r"[A-Za-z0-9._-]{1,100}", ws) for ws in self.cognito_workspaces):
            raise ValueError("cognitoWorkspaces are workspace ids of letters, digits, '.', '_' and '-'")
        if self.oidc_issuer and (not self.oidc_issuer.startswith("https://") or not self.oidc_audience):
            raise ValueError("oidcIssuer must be an https:// URL, and oidcAudience is required with it")
        if (self.oidc_console_client_id or self.oidc_console_name or self.oidc_console_scope) \
                and not self.oidc_issuer:
            raise ValueError("oidcConsoleClientId (and its name and scope) need an external oidcIssuer")
        if (self.cognito or self.oidc_issuer) and self.api_key_required:
            raise ValueError("apiKeyRequired=true makes API Gateway refuse a client holding only an access token")
