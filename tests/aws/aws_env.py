"""moto-backed AWS fixtures: the stack's resources of testkit/moto_aws.py, and AGENTKB_* naming them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moto import mock_aws

from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.composition import reset_ports
from agentkb.config import reset_settings
from testkit.environment import CREDENTIALS, REGION, stack_environment
from testkit.moto_aws import AwsEnv, provision

__all__ = ["REGION", "AwsEnv", "aws", "aws_settings"]


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEnv]:
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    aws_client.cache_clear()
    with mock_aws():
        yield provision("agentkb-test")
    aws_client.cache_clear()


@pytest.fixture()
def aws_settings(aws: AwsEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEnv]:
    """AGENTKB_* as the CDK stack sets them (backend=aws), against the moto resources."""
    env = stack_environment(aws.tables, aws.secret_arn, aws.bucket, aws.queue_url)
    env["AGENTKB_RERANK_MODEL_ARN"] = f"arn:aws:bedrock:{REGION}::foundation-model/cohere.rerank-v3-5:0"
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    reset_settings()
    reset_ports()
    yield aws
    reset_settings()
    reset_ports()
