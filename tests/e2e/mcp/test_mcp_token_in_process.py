"""A token as the credential of in-process tool calls (stdio's AGENTKB_KEY, or a client's bearer over HTTP): the
workspace is implied from the token's one workspace, the call passes the gate as a bearer token."""

from __future__ import annotations

from agentkb.mcp.backends import InProcessApi
from agentkb.mcp.cli import _workspaces_of
from agentkb.mcp.server import ToolRunner
from agentkb.mcp.tools import BY_NAME
from agentkb.services.identity.dev_issuer import DevIssuer
from tests.e2e.mcp.conftest import Seeded


def test_a_token_runs_tools_in_process_with_its_workspace_implied(seeded: Seeded, dev_issuer: DevIssuer) -> None:
    runner = ToolRunner(InProcessApi(), None, _workspaces_of)
    token = dev_issuer.mint("alice", ["api:read"], ["demo"])
    assert _workspaces_of(token) == ("demo",)
    listed = runner.run(BY_NAME["list_knowledge_bases"], {}, token)
    assert not listed.is_error and [kb["id"] for kb in listed.structured_content["data"]] == [seeded.kb]
    expired = dev_issuer.mint("alice", ["api:read"], ["demo"], exp=1)
    assert _workspaces_of(expired) is None
    refused = runner.run(BY_NAME["list_knowledge_bases"], {"workspaceId": "demo"}, expired)
    assert refused.is_error and refused.structured_content["error"]["details"]["code"] == "INVALID_TOKEN"
