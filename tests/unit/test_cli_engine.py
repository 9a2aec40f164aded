"""The CLI acts on the configured engine: on AWS without its settings a command fails cleanly and writes nothing
locally (it once fell back to the local SQLite file)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentkb.cli.main import main
from agentkb.composition import reset_ports
from agentkb.config import reset_settings
from agentkb.local.demo import DEMO_DIR


def test_graph_import_on_aws_without_a_graph_table_fails_without_writing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [n for n in os.environ if n.startswith("AGENTKB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("AGENTKB_BACKEND", "aws")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AGENTKB_DATA_DIR", str(tmp_path / "data"))
    try:
        assert main(["graph", "import", str(DEMO_DIR / "graph.json"), "--workspace", "ws1"]) == 2
        assert "AGENTKB_GRAPH_TABLE is required" in capsys.readouterr().err
        assert not (tmp_path / "data").exists()
    finally:
        reset_settings()
        reset_ports()
