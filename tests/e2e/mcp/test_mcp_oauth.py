"""`agentkb mcp --http` with an issuer configured is an OAuth resource server (RFC 9728 metadata, the 401
challenge that names it), and serves a client holding only an access token from that issuer, through the SDK's
client; agentkb keys keep working beside tokens. The issuer is the dev issuer, in this process on loopback."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import httpx2
import pytest

from agentkb.services.identity.dev_issuer import DevIssuer
from tests.e2e.mcp.conftest import Seeded
from tests.e2e.mcp.support import agentkb_command, started, stop, structured, subprocess_env
from tests.e2e.mcp.test_mcp_processes import over_http

pytestmark = pytest.mark.e2e
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@dataclass(frozen=True)
class Served:
    url: str
    issuer: DevIssuer


@pytest.fixture(scope="module")
def served(seeded_dir: Seeded) -> Iterator[Served]:
    with DevIssuer() as issuer:
        env = subprocess_env(seeded_dir.data_dir, AGENTKB_OIDC_ISSUER=issuer.issuer,
                             AGENTKB_OIDC_AUDIENCE=issuer.audience)
        proc: subprocess.Popen[str]
        proc, url = started(agentkb_command("mcp", "--http", "--port", "0"), env, r"(http://127\.0\.0\.1:\d+/mcp)")
        try:
            yield Served(url, issuer)
        finally:
            stop(proc)


def test_protected_resource_metadata_names_the_issuer(served: Served) -> None:
    origin = served.url.removesuffix("/mcp")
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        answer = httpx2.get(origin + path, timeout=30)
        assert answer.status_code == 200
        assert answer.json() == {"resource": served.url, "authorization_servers": [served.issuer.issuer],
                                 "scopes_supported": ["api:read", "api:write"], "bearer_methods_supported": ["header"],
                                 "resource_name": "agentkb MCP"}


def test_no_credential_is_a_401_challenge_naming_the_metadata(served: Served) -> None:
    answer = httpx2.post(served.url, json=INITIALIZE, headers=ACCEPT, timeout=30)
    assert answer.status_code == 401
    metadata = served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert answer.headers["www-authenticate"] == (f'Bearer resource_metadata="{metadata}", '
                                                  'scope="api:read api:write"')
    assert answer.json()["error"]["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize("token_of", [lambda i: "not.a.jwt", lambda i: i.mint("alice", ["api:read"], ["demo"], exp=1),
                                      lambda i: i.mint("alice", ["api:read"], ["demo"], aud="another-api")])
def test_a_refused_token_is_a_401_invalid_token(served: Served, token_of: object) -> None:
    token = token_of(served.issuer)  # type: ignore[operator]
    answer = httpx2.post(served.url, json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {token}"},
                         timeout=30)
    assert answer.status_code == 401
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert "resource_metadata=" in answer.headers["www-authenticate"]


def test_a_token_alone_runs_the_tools_its_scopes_allow(seeded_dir: Seeded, served: Served) -> None:
    reader = served.issuer.mint("alice", ["api:read"], ["demo"])
    listed = over_http(served.url, {"Authorization": f"Bearer {reader}"},
                       lambda client: client.call_tool("list_knowledge_bases", {}))
    assert [kb["id"] for kb in structured(listed)["data"]] == [seeded_dir.kb]
    found = over_http(served.url, {"Authorization": f"Bearer {reader}"}, lambda client: client.call_tool(
        "search_knowledge", {"knowledgeBaseIds": seeded_dir.kb, "query": "reset my password", "topK": 2}))
    assert structured(found)["data"]["results"][0]["documentName"] == "password-reset.md"
    memory = {"name": "mcp-token-note", "body": "Written by a token holder.", "type": "note",
              "visibility": "personal"}
    refused = over_http(served.url, {"Authorization": f"Bearer {reader}"},
                        lambda client: client.call_tool("write_memory", memory))
    assert refused.is_error and structured(refused)["error"]["details"]["code"] == "INSUFFICIENT_SCOPE"
    writer = served.issuer.mint("alice", ["api:read", "api:write"], ["demo"])
    written = over_http(served.url, {"Authorization": f"Bearer {writer}"},
                        lambda client: client.call_tool("write_memory", memory))
    assert not written.is_error, structured(written)
    elsewhere = served.issuer.mint("mallory", ["api:read"], ["other"])
    outside = over_http(served.url, {"Authorization": f"Bearer {elsewhere}"},
                        lambda client: client.call_tool("list_knowledge_bases", {"workspaceId": "demo"}))
    assert outside.is_error, structured(outside)


def test_keys_keep_working_beside_tokens(seeded_dir: Seeded, served: Served) -> None:
    for headers in ({"X-API-Key": seeded_dir.key}, {"Authorization": f"Bearer {seeded_dir.key}"}):
        listed = over_http(served.url, headers, lambda client: client.call_tool("list_knowledge_bases", {}))
        assert [kb["id"] for kb in structured(listed)["data"]] == [seeded_dir.kb]
