"""The engines of the port congruence suites: every port of one engine, built the way the handlers build them.

`ports` is parametrised over the embedded engine (SQLite in a fresh data dir) and the AWS engine (DynamoDB, S3
and Secrets Manager on moto, the in-memory OpenSearch fake; tests/aws/aws_backend.py). A suite asks only for
`ports` and asserts the same observable behaviour, errors included, from both; a new port operation is one more
test over the same fixture.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "aws"))  # aws_env, aws_backend, fake_opensearch

from aws_backend import aws_backend  # noqa: E402,F401  (fixtures the AWS engine builds on)
from aws_env import aws, aws_settings  # noqa: E402,F401

from agentkb.composition import Ports, get_ports  # noqa: E402

ENGINES = ("embedded", "aws")


@dataclass(frozen=True)
class EnginePorts:
    """One engine's bundle of ports (composition.get_ports for that engine's settings), named."""

    engine: str
    bundle: Ports

    def __getattr__(self, name: str) -> Any:
        return getattr(self.bundle, name)


@pytest.fixture(params=ENGINES)
def ports(request: pytest.FixtureRequest) -> EnginePorts:
    request.getfixturevalue("data_dir" if request.param == "embedded" else "aws_backend")
    return EnginePorts(request.param, get_ports())
