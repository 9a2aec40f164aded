"""Shared fixtures: an isolated data dir per test, keys, a demo knowledge base."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkb.composition import Ports, get_ports, reset_ports
from agentkb.config import Settings, reset_settings
from agentkb.services.search.service import QUERY_VECTORS
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
def container(data_dir: Path) -> Ports:
    """The configured engine's bundle of ports (composition.get_ports), as the handlers see it."""
    return get_ports()


@pytest.fixture()
def rw_key(container: Any) -> str:
    return mint(container, ["ws1"], ["api:read", "api:write"], "alice")


@pytest.fixture()
def ro_key(container: Any) -> str:
    return mint(container, ["ws1"], ["api:read"], "reader")


@pytest.fixture()
def other_key(container: Any) -> str:
    return mint(container, ["ws2"], ["api:read", "api:write"], "mallory")


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
