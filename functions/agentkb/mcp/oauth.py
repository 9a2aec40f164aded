"""`agentkb mcp --http` as an OAuth 2.1 resource server (MCP authorization spec), when an issuer is configured.

- `/.well-known/oauth-protected-resource` (and its path form for the `/mcp` resource, RFC 9728 §3.1) tells a
  client the resource, its authorization server (AGENTKB_OIDC_ISSUER) and the scopes.
- A request to `/mcp` with no credential is answered 401 with
  `WWW-Authenticate: Bearer resource_metadata="<that URL>"`, so an OAuth-speaking MCP client finds the issuer;
  a bearer token that does not verify gets the same challenge with `error="invalid_token"`.
- An agentkb key (`X-API-Key`, or `Authorization: Bearer akb_...`) passes on: each tool call's API request
  checks it (and, again, a token), scopes and workspaces included, at the gate.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread

from agentkb.api.route import READ, WRITE
from agentkb.errors import DomainError, InvalidToken, Unauthorized
from agentkb.services.access.api_keys import KEY_PREFIX
from agentkb.services.access.credentials import bearer_token

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]
METADATA_PATH = "/.well-known/oauth-protected-resource"

TOOL_SCOPES = [READ, WRITE]  # what the tools need: no tool is an operator (api:admin) route


def metadata(resource: str, issuer: str) -> dict[str, Any]:
    """RFC 9728 protected resource metadata."""
    return {"resource": resource, "authorization_servers": [issuer], "scopes_supported": TOOL_SCOPES,
            "bearer_methods_supported": ["header"], "resource_name": "agentkb MCP"}


class ProtectedResource:
    """ASGI middleware in front of the SDK's streamable HTTP app. `verify(token)` raises a DomainError
    (InvalidToken, or ServiceUnavailable when the issuer's keys cannot be fetched) for a token it refuses."""

    def __init__(self, app: Asgi, resource: str, issuer: str, verify: Callable[[str], object]) -> None:
        self.app, self.resource, self.issuer, self.verify = app, resource, issuer, verify
        parts = urlsplit(resource)  # RFC 9728 §3.1: the well-known segment goes between host and path
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{parts.path.rstrip('/')}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if path == METADATA_PATH or path.startswith(METADATA_PATH + "/"):
            await _json(send, 200, metadata(self.resource, self.issuer), {"cache-control": "max-age=300"})
            return
        refusal = await self._refusal(scope) if path.startswith("/mcp") else None
        if refusal is not None:
            await _json(send, refusal.http_status, refusal.envelope(), refusal.headers)
            return
        await self.app(scope, receive, send)

    async def _refusal(self, scope: Scope) -> DomainError | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        if headers.get("x-api-key"):
            return None
        token = bearer_token(headers.get("authorization"))
        if token is None:
            challenge = f'Bearer resource_metadata="{self.metadata_url}", scope="{" ".join(TOOL_SCOPES)}"'
            return _unauthorized(challenge)
        if token.startswith(KEY_PREFIX + "_"):
            return None
        try:
            await anyio.to_thread.run_sync(self.verify, token)  # a JWKS fetch blocks: never on the event loop
        except InvalidToken as exc:
            reason = str(exc.details.get("reason", "invalid token")) if isinstance(exc.details, dict) else ""
            challenge = (f'Bearer resource_metadata="{self.metadata_url}", error="invalid_token", '
                         f'error_description="{reason}"')
            return _with_challenge(exc, challenge)
        except DomainError as exc:
            return exc
        return None


def _unauthorized(challenge: str) -> DomainError:
    return Unauthorized(headers={"WWW-Authenticate": challenge})


def _with_challenge(exc: DomainError, challenge: str) -> DomainError:
    exc.headers = {**exc.headers, "WWW-Authenticate": challenge}
    return exc


async def _json(send: Send, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
    raw = json.dumps(body, separators=(",", ":")).encode("utf-8")
    pairs = [(b"content-type", b"application/json"), (b"content-length", str(len(raw)).encode())]
    pairs += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": pairs})
    await send({"type": "http.response.body", "body": raw})
