"""Fixtures of the CLI tests: `engine` runs a test once on the embedded engine and once on the AWS engine (moto
DynamoDB, the in-memory OpenSearch, the fake Bedrock of testkit/aws_backend.py), through `agentkb.cli.main.main`."""

from __future__ import annotations

import pytest

ENGINES = ("embedded", "aws")


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    request.getfixturevalue("data_dir" if request.param == "embedded" else "aws_backend")
    return str(request.param)
