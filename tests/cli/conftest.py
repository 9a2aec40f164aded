"""Fixtures of the CLI tests: `engine` runs a test once on the embedded engine and once on the AWS engine (moto
DynamoDB, the in-memory OpenSearch, the fake Bedrock of tests/aws/aws_backend.py), through `agentkb.cli.main.main`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "aws"))  # aws_env, aws_backend, fake_opensearch

from aws_backend import aws_backend  # noqa: E402,F401  (fixtures the AWS engine builds on)
from aws_env import aws, aws_settings  # noqa: E402,F401

ENGINES = ("embedded", "aws")


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    request.getfixturevalue("data_dir" if request.param == "embedded" else "aws_backend")
    return str(request.param)
