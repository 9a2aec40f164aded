"""MCP fixtures: one seeded demo data directory per worker (knowledge base, graph, memories, dev key), pointed at by
each test through the usual environment, and helpers to run the SDK's client."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentkb.composition import get_ports, reset_ports
from agentkb.config import reset_settings
from tests.e2e.mcp.support import ENV, agentkb_command, started, stop, subprocess_env


@dataclass(frozen=True)
class Seeded:
    data_dir: Path
    key: str  # the demo's dev key: workspace "demo", read + write
    kb: str


@pytest.fixture(scope="session")
def seeded_dir(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    from agentkb.local.demo import setup

    data_dir = tmp_path_factory.mktemp("mcp") / "data"
    with pytest.MonkeyPatch.context() as patch:
        for name, value in {**ENV, "AGENTKB_DATA_DIR": str(data_dir)}.items():
            patch.setenv(name, value)
        reset_settings()
        reset_ports()
        state = setup(get_ports())
        reset_settings()
        reset_ports()
    return Seeded(data_dir, state["key"], state["kb"].id)


@pytest.fixture()
def seeded(seeded_dir: Seeded, monkeypatch: pytest.MonkeyPatch) -> Iterator[Seeded]:
    """The seeded data directory as this process's data directory (for in-process servers)."""
    for name, value in {**ENV, "AGENTKB_DATA_DIR": str(seeded_dir.data_dir)}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AGENTKB_RATE_LIMIT_PER_MINUTE", raising=False)
    reset_settings()
    reset_ports()
    yield seeded_dir
    reset_settings()
    reset_ports()


@pytest.fixture(scope="module")
def api_base(seeded_dir: Seeded) -> Iterator[str]:
    """`agentkb serve` on loopback port 0 over the seeded data directory, stopped after the module."""
    proc, base = started(agentkb_command("serve", "--host", "127.0.0.1", "--port", "0"),
                         subprocess_env(seeded_dir.data_dir), r"(http://127\.0\.0\.1:\d+)")
    try:
        yield base
    finally:
        stop(proc)
