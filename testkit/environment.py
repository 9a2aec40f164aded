"""The environment variables of the AWS backend without an AWS account: moto's credentials, and what a fresh
interpreter importing the handlers with AGENTKB_BACKEND=aws needs (the bundle-import test, bench/coldstart/run.py)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGION = "eu-west-1"
# moto answers any credentials; these keep boto3 from looking for real ones.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
               "AWS_DEFAULT_REGION": REGION, "AWS_REGION": REGION, "POWERTOOLS_METRICS_DISABLED": "true",
               "POWERTOOLS_TRACE_DISABLED": "true"}


def aws_environment() -> dict[str, str]:
    """This process's environment without its AGENTKB_*, plus AGENTKB_BACKEND=aws settings naming made-up resources
    (a cold start creates no client and calls nothing), with functions/ and the repository on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKB_")}
    env.update({
        "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)]),
        "AGENTKB_BACKEND": "aws", "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION,
        "AGENTKB_OPENSEARCH_ENDPOINT": "https://example.eu-west-1.aoss.amazonaws.com",
        "AGENTKB_EMBEDDING_MODEL": "amazon.titan-embed-text-v2:0", "AGENTKB_EMBEDDING_DIMENSION": "1024",
        "AGENTKB_SECRET_ARN": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:pepper",
        "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_SERVICE_NAME": "agentkb",
    })
    for table in ("CATALOG", "MEMORY", "GRAPH", "SNAPSHOT", "KEYS", "RATE_LIMIT", "IDEMPOTENCY"):
        env[f"AGENTKB_{table}_TABLE"] = f"agentkb-test-{table.lower()}"
    return env


def stack_environment(tables: dict[str, str], secret_arn: str, bucket: str, queue_url: str) -> dict[str, str]:
    """AGENTKB_* as the CDK stack sets them (backend=aws), for moto resources (table name by infra TABLES key)."""
    env = {"AGENTKB_BACKEND": "aws", "AGENTKB_OPENSEARCH_ENDPOINT": "https://example.eu-west-1.aoss.amazonaws.com",
           "AGENTKB_EMBEDDING_MODEL": "amazon.titan-embed-text-v2:0", "AGENTKB_EMBEDDING_DIMENSION": "256",
           "AGENTKB_SECRET_ARN": secret_arn, "AGENTKB_BUCKET": bucket, "AGENTKB_INGEST_QUEUE_URL": queue_url}
    env.update({f"AGENTKB_{name.upper()}_TABLE": table for name, table in tables.items()})
    return env
