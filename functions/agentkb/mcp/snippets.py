"""Ready-to-paste MCP client configurations (Claude Code, Claude Desktop, Cursor) for `agentkb mcp`."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path


def agentkb_executable() -> str:
    """The `agentkb` script beside this interpreter (the .venv's), as an absolute path clients can launch."""
    script = Path(sys.executable).with_name("agentkb")
    return str(script) if script.exists() else "agentkb"


def server_entry(command: str, data_dir: Path, key: str) -> dict[str, object]:
    return {"command": command, "args": ["mcp", "--data-dir", str(data_dir)], "env": {"AGENTKB_KEY": key}}


def client_configs(data_dir: Path, key: str, command: str | None = None) -> list[tuple[str, str]]:
    """(title, text) per client: a `claude mcp add` line and the `mcpServers` JSON Claude Desktop and Cursor read."""
    command = command or agentkb_executable()
    data_dir = Path(data_dir).resolve()
    add = (f"claude mcp add agentkb --env AGENTKB_KEY={shlex.quote(key)} -- {shlex.quote(command)} mcp "
           f"--data-dir {shlex.quote(str(data_dir))}")
    servers = json.dumps({"mcpServers": {"agentkb": server_entry(command, data_dir, key)}}, indent=2)
    return [("Claude Code", add),
            ("Claude Desktop (claude_desktop_config.json) and Cursor (.cursor/mcp.json)", servers)]
