"""Fixtures of the CLI tests: `engine` runs a test once on the embedded engine and once on the AWS engine (moto
DynamoDB, the in-memory OpenSearch, the fake Bedrock of testkit/aws_backend.py), through `agentkb.cli.main.main`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkb.cli.main import main

ENGINES = ("embedded", "aws")


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    request.getfixturevalue("data_dir" if request.param == "embedded" else "aws_backend")
    return str(request.param)


@pytest.fixture()
def run(engine: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """`run(*argv)` -> (exit status, stdout (parsed with --json), stderr) of `agentkb` on the test's engine."""

    def call(*argv: str) -> tuple[int, Any, str]:
        code = main(list(argv))
        captured = capsys.readouterr()
        out = json.loads(captured.out) if "--json" in argv and code == 0 else captured.out
        return code, out, captured.err

    return call
