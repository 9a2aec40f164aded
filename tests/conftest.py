"""Shared fixtures: an isolated data dir per test, keys, a demo knowledge base."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkb.adapters.factory import get_container, reset_container
from agentkb.config import reset_settings
from tests.helpers import mint


@pytest.fixture()
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENTKB_BACKEND", "embedded")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    reset_settings()
    reset_container()
    yield tmp_path / "data"
    reset_settings()
    reset_container()


@pytest.fixture()
def container(data_dir: Path) -> Any:
    return get_container()


@pytest.fixture()
def rw_key(container: Any) -> str:
    return mint(container, ["ws1"], ["api:read", "api:write"], "alice")


@pytest.fixture()
def ro_key(container: Any) -> str:
    return mint(container, ["ws1"], ["api:read"], "reader")


@pytest.fixture()
def other_key(container: Any) -> str:
    return mint(container, ["ws2"], ["api:read", "api:write"], "mallory")
