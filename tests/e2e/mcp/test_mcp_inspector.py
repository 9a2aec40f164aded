"""The MCP inspector's CLI (@modelcontextprotocol/inspector, pinned in package.json and installed into node_modules
by `make dev-install`) against `agentkb mcp` on stdio, as a developer runs it: tools/list, then a search by
knowledge base name with `--tool-arg topK=3` (the CLI sends an argument as a string unless the property's
`type` is number, integer, boolean, object or array)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import ROOT, agentkb_command

pytestmark = pytest.mark.e2e

INSPECTOR = ROOT / "node_modules" / ".bin" / "mcp-inspector"


def inspector(seeded: Seeded, data_dir: Path, *cli: str) -> Any:
    if not INSPECTOR.exists():
        pytest.skip(f"{INSPECTOR} is missing: `make dev-install` (npm ci) installs the pinned MCP inspector")
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH: the MCP inspector is a Node.js program")
    server = agentkb_command("mcp", "--data-dir", str(data_dir))
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    pythonpath = os.pathsep.join([str(ROOT / "functions"), str(ROOT)])  # this source tree, not an installed one
    done = subprocess.run([str(INSPECTOR), "--cli", "-e", f"AGENTKB_KEY={seeded.key}", "-e", f"PYTHONPATH={pythonpath}",
                           *server, *cli], env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_inspector_lists_the_tools_with_integer_schemas(seeded_dir: Seeded) -> None:
    listed = inspector(seeded_dir, seeded_dir.data_dir, "--method", "tools/list")
    tools = {tool["name"]: tool for tool in listed["tools"]}
    assert set(tools) == {"search_knowledge", "search_graph", "recall", "create_snapshot", "write_memory",
                          "list_knowledge_bases"}
    assert tools["search_knowledge"]["inputSchema"]["properties"]["topK"]["type"] == "integer"


def test_the_inspector_searches_a_knowledge_base_by_name_with_topk_3(seeded_dir: Seeded) -> None:
    result = inspector(seeded_dir, seeded_dir.data_dir, "--method", "tools/call", "--tool-name", "search_knowledge",
                       "--tool-arg", "knowledgeBaseIds=handbook", "--tool-arg", "query=How do I reset my password?",
                       "--tool-arg", "topK=3")
    assert not result.get("isError"), result["content"]
    hits = result["structuredContent"]["data"]["results"]
    assert len(hits) == 3 and hits[0]["documentName"] == "password-reset.md"
    assert {hit["knowledgeBaseId"] for hit in hits} == {seeded_dir.kb}
    assert result["content"][0]["text"].startswith("3 of 3 results for 'How do I reset my password?'")

