"""The engines of the port congruence suites: every port of one engine, built the way the handlers build them.

`ports` is parametrised over the embedded engine (SQLite in a fresh data dir) and the AWS engine (DynamoDB, S3
and Secrets Manager on moto, the in-memory OpenSearch fake; testkit/aws_backend.py). A suite asks only for
`ports` and asserts the same observable behaviour, errors included, from both; a new port operation is one more
test over the same fixture.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from agentkb.composition import Ports, get_ports

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
