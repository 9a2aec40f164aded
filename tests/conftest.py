"""Fixtures every layer shares: an isolated embedded data dir per test, the engine's bundle of ports, keys, and the
AWS engine on moto with its doubles (testkit/)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from moto import mock_aws

from agentkb.adapters.aws.dynamodb.tables import aws_client
from agentkb.composition import Ports, get_ports, reset_ports
from agentkb.config import Settings, reset_settings
from agentkb.services.search.service import QUERY_VECTORS
from testkit.aws_backend import AwsBackend
from testkit.bedrock import FakeAgentRuntime, FakeBedrockRuntime
from testkit.environment import CREDENTIALS, REGION, stack_environment
from testkit.fake_opensearch import FakeOpenSearch
from testkit.moto_aws import AwsEnv, one_backup_per_table, provision, route_to_doubles
from tests.helpers import mint
from tests.upstream import pytest_sessionfinish, pytest_terminal_summary, pytest_testnodedown  # noqa: F401


@pytest.fixture()
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENTKB_BACKEND", "embedded")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    reset_settings()
    reset_ports()
    QUERY_VECTORS.clear()  # the process-wide embedder outlives a test: so would its remembered query vectors
    yield tmp_path / "data"
    reset_settings()
    reset_ports()


@pytest.fixture()
def one_rate_window(monkeypatch: pytest.MonkeyPatch) -> float:
    """The gate's clock only, pinned 30 s into a one-minute window: a test's requests all count in one window,
    never across a minute boundary (the fixed-window limiters reset there, and a loaded run can straddle it)."""
    from agentkb.api import gate

    now = 1_800_000_030.0
    monkeypatch.setattr(gate, "time", SimpleNamespace(time=lambda: now))
    return now


@pytest.fixture()
def bundle(data_dir: Path) -> Ports:
    """The configured engine's bundle of ports (composition.get_ports), as the handlers see it."""
    return get_ports()


@pytest.fixture()
def rw_key(bundle: Ports) -> str:
    return mint(bundle, ["ws1"], ["api:read", "api:write"], "alice")


@pytest.fixture()
def ro_key(bundle: Ports) -> str:
    return mint(bundle, ["ws1"], ["api:read"], "reader")


@pytest.fixture()
def other_key(bundle: Ports) -> str:
    return mint(bundle, ["ws2"], ["api:read", "api:write"], "mallory")


@pytest.fixture()
def override_ports(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Ports]:
    """`override_ports(embedder=fake, settings=...)`: every function's requests (gate, routes, queue consumer) then
    use the bundle with those swapped, through the resolvers' `dependency_overrides`. Cumulative; undone after."""
    from agentkb.api.functions import APPS

    current: list[Ports] = []

    def swap(settings: Settings | None = None, **ports: Any) -> Ports:
        bundle = (current[-1] if current else get_ports()).replace(**ports)
        if settings is not None:
            bundle = bundle.with_settings(settings)
        current.append(bundle)
        for app in APPS.values():
            monkeypatch.setitem(app().dependency_overrides, get_ports, lambda: bundle)
        return bundle

    return swap


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsEnv]:
    """The stack's resources on moto (testkit/moto_aws.py), with the test credentials set."""
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


@pytest.fixture()
def aws_backend(aws_settings: AwsEnv, monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsBackend]:
    """The whole AWS engine: moto plus the OpenSearch and Bedrock doubles (testkit/aws_backend.py)."""
    one_backup_per_table(monkeypatch)
    backend = AwsBackend(aws_settings, FakeOpenSearch(), FakeBedrockRuntime())
    backend.clients.update({"bedrock-runtime": backend.bedrock, "bedrock-agent-runtime": FakeAgentRuntime()})
    route_to_doubles(monkeypatch, backend.clients, backend.opensearch)
    yield backend


@pytest.fixture()
def dev_issuer(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A loopback OIDC issuer (services/identity/dev_issuer.py) on 127.0.0.1 and AGENTKB_OIDC_* pointing at it;
    the verifiers (and their key caches) are forgotten before and after. Request it after the engine fixture."""
    from agentkb.services.identity.dev_issuer import DevIssuer
    from agentkb.services.identity.verifier import forget_verifiers

    with DevIssuer() as issuer:
        monkeypatch.setenv("AGENTKB_OIDC_ISSUER", issuer.issuer)
        monkeypatch.setenv("AGENTKB_OIDC_AUDIENCE", issuer.audience)
        reset_settings()
        reset_ports()
        forget_verifiers()
        yield issuer
    forget_verifiers()
    monkeypatch.delenv("AGENTKB_OIDC_ISSUER")
    monkeypatch.delenv("AGENTKB_OIDC_AUDIENCE")
    reset_settings()
    reset_ports()
