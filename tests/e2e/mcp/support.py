"""Helpers of the MCP tests: subprocess environment and command, reading tool results."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
ENV = {"AGENTKB_BACKEND": "embedded", "POWERTOOLS_METRICS_DISABLED": "true", "POWERTOOLS_TRACE_DISABLED": "true"}


def subprocess_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of an `agentkb` subprocess on this source tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKB_")}
    env.update(ENV)
    env.update({"AGENTKB_DATA_DIR": str(data_dir),
                "PYTHONPATH": os.pathsep.join([str(ROOT / "functions"), str(ROOT)])})
    env.update(extra)
    return env


def agentkb_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentkb.cli.main", *args]


def started(command: list[str], env: dict[str, str], pattern: str) -> tuple[subprocess.Popen[str], str]:
    """A server subprocess and the address it printed on its first stdout line."""
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    found = re.search(pattern, line)
    if found is None:
        proc.terminate()
        proc.wait(timeout=30)
        raise AssertionError(f"no address in {line!r}")
    return proc, found.group(1)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(timeout=30)


def structured(result: Any) -> dict[str, Any]:
    content = result.structured_content
    assert isinstance(content, dict), result
    return content


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")
