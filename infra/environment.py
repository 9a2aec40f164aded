"""The ONE settings mapping every function receives (read by functions/agentkb/config.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Aws

from infra import constants as c
from infra.components.identity import RESOURCE_SERVER
from infra.config import DeploymentConfig

if TYPE_CHECKING:
    from infra.stacks.data_stack import DataStack


def foundation_model_arn(model_id: str) -> str:
    return f"arn:{Aws.PARTITION}:bedrock:{Aws.REGION}::foundation-model/{model_id}"


def function_environment(config: DeploymentConfig, data: DataStack) -> dict[str, str]:
    """AGENTKB_* and POWERTOOLS_* variables, built from the data stack's resources and the context."""
    tables = data.tables.by_name
    return {
        "AGENTKB_BACKEND": "aws",
        "AGENTKB_OPENSEARCH_ENDPOINT": data.vectors.endpoint,
        "AGENTKB_OPENSEARCH_GENERATION": config.generation,
        "AGENTKB_OPENSEARCH_INDEX_PREFIX": c.INDEX_PREFIX,
        "AGENTKB_CATALOG_TABLE": tables["catalog"].table_name,
        "AGENTKB_MEMORY_TABLE": tables["memory"].table_name,
        "AGENTKB_GRAPH_TABLE": tables["graph"].table_name,
        "AGENTKB_SNAPSHOT_TABLE": tables["snapshot"].table_name,
        "AGENTKB_KEYS_TABLE": tables["keys"].table_name,
        "AGENTKB_RATE_LIMIT_TABLE": tables["rate_limit"].table_name,
        "AGENTKB_IDEMPOTENCY_TABLE": tables["idempotency"].table_name,
        "AGENTKB_BUCKET": data.documents.bucket.bucket_name,
        "AGENTKB_SECRET_ARN": data.pepper.secret.secret_arn,
        "AGENTKB_INGEST_QUEUE_URL": data.ingest.queue.queue_url,
        "AGENTKB_EMBEDDING_MODEL": config.embedding_model,
        "AGENTKB_EMBEDDING_DIMENSION": str(config.embedding_dimension),
        "AGENTKB_RERANK_MODEL_ARN": foundation_model_arn(config.rerank_model),
        "AGENTKB_RATE_LIMIT_PER_MINUTE": str(config.app_rate_limit_per_minute),
        "AGENTKB_LOG_LEVEL": config.log_level,
        **token_settings(config, data),
        "POWERTOOLS_SERVICE_NAME": c.SERVICE,
        "POWERTOOLS_METRICS_NAMESPACE": c.SERVICE,
        "POWERTOOLS_LOG_LEVEL": config.log_level,
    }


def token_settings(config: DeploymentConfig, data: DataStack) -> dict[str, str]:
    """AGENTKB_OIDC_*: the stack's Cognito issuer, an external one from the context, or none (keys only)."""
    if data.identity is not None:
        return {"AGENTKB_OIDC_ISSUER": data.identity.issuer,
                "AGENTKB_OIDC_AUDIENCE": data.identity.client.user_pool_client_id,
                "AGENTKB_OIDC_WORKSPACES_CLAIM": "scope", "AGENTKB_OIDC_SCOPE_PREFIX": f"{RESOURCE_SERVER}/"}
    if not config.oidc_issuer:
        return {}
    settings = {"AGENTKB_OIDC_ISSUER": config.oidc_issuer, "AGENTKB_OIDC_AUDIENCE": config.oidc_audience,
                "AGENTKB_OIDC_WORKSPACES_CLAIM": config.oidc_workspaces_claim}
    optional = {"AGENTKB_OIDC_SCOPE_PREFIX": config.oidc_scope_prefix,
                "AGENTKB_OIDC_CONSOLE_CLIENT_ID": config.oidc_console_client_id,
                "AGENTKB_OIDC_CONSOLE_NAME": config.oidc_console_name,
                "AGENTKB_OIDC_CONSOLE_SCOPE": config.oidc_console_scope}
    return settings | {name: value for name, value in optional.items() if value}
