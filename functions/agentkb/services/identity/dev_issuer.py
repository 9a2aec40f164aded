"""A loopback OAuth 2.0 / OIDC issuer for trying tokens locally (`agentkb auth dev-issuer`) and for the tests.

It serves, on 127.0.0.1 (or ::1) only:
  GET  /.well-known/openid-configuration   discovery (issuer, jwks_uri, token_endpoint)
  GET  /jwks.json                          the public keys (RS256 by default; `rotate` adds one)
  POST /token                              the client-credentials grant (RFC 6749 §4.4): client_id and
                                           client_secret (form fields or HTTP Basic), scope, workspace (repeatable)
The token's `sub` is the client id; any client id is accepted with the one shared client secret, so one
issuer can speak for several people or agents. Keys live in memory only: a restart invalidates every token.
Nothing is downloaded; nothing listens beyond loopback.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote

from agentkb.config import LOOPBACK_HOSTS
from agentkb.services.identity.signing import DEFAULT_TTL_S, KeyRing

DISCOVERY = "/.well-known/openid-configuration"
MAX_FORM_BYTES = 16 * 1024


class DevIssuer:
    """The issuer and its HTTP server; `start()` serves in a daemon thread, `stop()` closes the socket."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, audience: str = "agentkb",
                 client_secret: str | None = None, workspaces_claim: str = "workspaces", alg: str = "RS256") -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"the dev issuer listens on loopback only (127.0.0.1, ::1), not {host!r}")
        self._server = _Server((host, port), _handler(self), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        shown = f"[{host}]" if ":" in host else host
        self.issuer = f"http://{shown}:{self._server.server_address[1]}"
        self.audience, self.workspaces_claim = audience, workspaces_claim
        self.client_secret = client_secret or secrets.token_urlsafe(24)
        self.keys = KeyRing(self.issuer, audience, alg)
        self._thread: threading.Thread | None = None

    def discovery(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "jwks_uri": f"{self.issuer}/jwks.json", "token_endpoint": f"{self.issuer}/token",
                "grant_types_supported": ["client_credentials"], "response_types_supported": ["token"],
                "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
                "scopes_supported": ["api:read", "api:write"], "subject_types_supported": ["public"],
                "id_token_signing_alg_values_supported": [self.keys.current.alg]}

    def mint(self, sub: str, scopes: list[str], workspaces: list[str], /, **claims: Any) -> str:
        return self.keys.mint(sub, scopes, workspaces, workspaces_claim=self.workspaces_claim, **claims)

    def token_response(self, form: dict[str, list[str]], basic: tuple[str, str] | None) -> tuple[int, dict[str, Any]]:
        """The token endpoint's answer (status, JSON body) to a form."""
        if form.get("grant_type", [""])[-1] != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        client_id, secret = basic or (form.get("client_id", [""])[-1], form.get("client_secret", [""])[-1])
        if not client_id or not hmac.compare_digest(secret.encode(), self.client_secret.encode()):
            return 401, {"error": "invalid_client"}
        scopes = " ".join(form.get("scope", [])).split()
        workspaces = [w for value in form.get("workspace", []) for w in value.replace(",", " ").split()]
        token = self.mint(client_id, scopes, workspaces)
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": DEFAULT_TTL_S,
                     "scope": " ".join(scopes)}

    def start(self) -> DevIssuer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="dev-issuer", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def stop(self) -> None:
        if self._thread is not None:  # shutdown() waits for a serving loop: only ask one that runs
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> DevIssuer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], family: int) -> None:
        self.address_family = family
        super().__init__(address, handler)


def _basic(header: str | None) -> tuple[str, str] | None:
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return unquote(user), unquote(password)


def _handler(issuer: DevIssuer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "agentkb-dev-issuer"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            return  # quiet: tokens travel in bodies, never in the log anyway

        def _send(self, status: int, body: dict[str, Any]) -> None:
            raw = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == DISCOVERY:
                self._send(200, issuer.discovery())
            elif self.path == "/jwks.json":
                self._send(200, issuer.keys.jwks())
            else:
                self._send(404, {"error": "not_found"})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if self.path != "/token" or length > MAX_FORM_BYTES:
                self._send(404 if self.path != "/token" else 413, {"error": "invalid_request"})
                return
            form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
            self._send(*issuer.token_response(form, _basic(self.headers.get("Authorization"))))

    return Handler
