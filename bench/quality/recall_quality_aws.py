"""(helper of `recall_quality --engine aws`) The AWS engine without an account, with the local embedding model.

DynamoDB, Secrets Manager, S3 and SQS are moto, OpenSearch Serverless is testkit's in-memory fake (its BM25 and
exact kNN), as in `bench.ob1.smoke_aws`; Bedrock is replaced by the embedded engine's model through the functions'
dependency overrides, so both engines rank the same vectors and only the stores differ.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.ob1.smoke_aws import _environment, _provision


@contextmanager
def aws_ports(_tmp: Path) -> Iterator[Any]:
    """The AWS engine's ports (with the local embedder) served by the ingest and recall functions' handlers."""
    from moto import mock_aws

    from agentkb.adapters.embedded.embedder import local_embedder
    from agentkb.api.functions import ingest_app, recall_app
    from agentkb.composition import get_ports, reset_ports
    from agentkb.config import reset_settings
    from testkit.bedrock import FakeAgentRuntime, FakeBedrockRuntime
    from testkit.fake_opensearch import FakeOpenSearch
    from testkit.moto_aws import one_backup_per_table, route_to_doubles
    from testkit.patches import Patches

    saved = dict(os.environ)
    os.environ.update(_environment({}))
    embedder = local_embedder()
    os.environ["AGENTKB_EMBEDDING_DIMENSION"] = str(embedder.dimension)
    try:
        with mock_aws(), Patches() as patch:
            os.environ.update(_environment(_provision()))
            os.environ["AGENTKB_EMBEDDING_DIMENSION"] = str(embedder.dimension)
            fakes: dict[str, Any] = {"bedrock-runtime": FakeBedrockRuntime(),
                                     "bedrock-agent-runtime": FakeAgentRuntime()}
            route_to_doubles(patch, fakes, FakeOpenSearch())
            one_backup_per_table(patch)
            reset_settings()
            reset_ports()
            ports = get_ports().replace(embedder=embedder)
            apps = [ingest_app(), recall_app()]
            for app in apps:
                app.dependency_overrides[get_ports] = lambda: ports
            try:
                yield ports
            finally:
                for app in apps:
                    app.dependency_overrides.pop(get_ports, None)
    finally:
        reset_settings()
        reset_ports()
        os.environ.clear()
        os.environ.update(saved)
