"""A loopback OpenID provider for the console's browser sign-in (authorization code + PKCE, a public client).

What a real IdP does for a single-page app, on 127.0.0.1 only, with keys in memory:
  GET  /.well-known/openid-configuration   discovery (CORS for the registered clients' origins, as real IdPs)
  GET  /jwks.json                          the public keys agentkb verifies access tokens with
  GET  /authorize                          checks the client, its exact redirect URI, response_type=code and an
                                           S256 code_challenge, then shows a small login page (Username, Approve,
                                           Deny); a bad client or redirect URI is an error page, never a redirect
  POST /authorize                          the page's answer: a code (single use, short-lived) or access_denied,
                                           back to the redirect URI with the state (and `iss`, RFC 9207)
  POST /token                              authorization_code: the code once, the same client and redirect URI,
                                           and the verifier whose S256 is the challenge; CORS for the registered
                                           origins (preflight answered too), like real IdPs for SPAs
Access tokens are agentkb's (aud = the API audience, `scope`, the workspaces claim); the ID token carries the
nonce, aud = the client id. Refusals are kept in `refusals` so a test can say which check refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import json
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt

from agentkb.services.identity.signing import KeyRing

CODE_TTL_S = 60
VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")  # RFC 7636 §4.1


def s256(verifier: str) -> str:
    """The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))), unpadded (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def pkce_matches(verifier: str, challenge: str) -> bool:
    """RFC 7636 §4.6: a well-formed verifier whose S256 is the challenge (compared in constant time)."""
    return bool(VERIFIER.match(verifier)) and hmac.compare_digest(s256(verifier), challenge)


@dataclass(frozen=True)
class User:
    sub: str
    scopes: tuple[str, ...]
    workspaces: tuple[str, ...]
    ttl_s: int = 3600  # the access token's lifetime, and the token response's expires_in
    expires_in: int | None = None  # what the token response says, when a test wants it to differ from ttl_s
    name: str = ""


@dataclass
class Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    nonce: str
    user: User
    expires_at: float


@dataclass
class OidcProvider:
    """Clients are {client_id: redirect_uri}; users by username. `start()` serves on a free loopback port."""

    clients: dict[str, str]
    users: dict[str, User]
    audience: str = "agentkb"
    workspaces_claim: str = "workspaces"
    refusals: list[str] = field(default_factory=list)
    forged_nonce: str | None = None  # a test's misbehaving provider: the ID token carries this nonce instead

    def __post_init__(self) -> None:
        self._server = _Server(("127.0.0.1", 0), self)
        self.issuer = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.keys = KeyRing(self.issuer, self.audience)
        self._codes: dict[str, Grant] = {}
        self._lock = threading.Lock()

    def discovery(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token", "jwks_uri": f"{self.issuer}/jwks.json",
                "response_types_supported": ["code"], "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
                "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["RS256"],
                "authorization_response_iss_parameter_supported": True}

    def origins(self) -> set[str]:
        return {f"{urlsplit(uri).scheme}://{urlsplit(uri).netloc}" for uri in self.clients.values()}

    def authorize_problem(self, query: dict[str, str]) -> str | None:
        """Why an authorization request is refused before any redirect (RFC 6749 §4.1.2.1), or None."""
        if self.clients.get(query.get("client_id", "")) is None:
            return "unknown client_id"
        if query.get("redirect_uri") != self.clients[query["client_id"]]:
            return "redirect_uri is not the one registered for this client"
        if query.get("response_type") != "code":
            return "response_type must be code"
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return "an S256 code_challenge is required"
        return None

    def login_page(self, query: dict[str, str]) -> tuple[int, str]:
        """The authorization endpoint's page: the login form carrying the request, or why it is refused."""
        problem = self.authorize_problem(query)
        if problem:
            self.refusals.append(problem)
            return 400, f"<!doctype html><title>Refused</title><link rel=icon href=data:,><p>{html.escape(problem)}"
        hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                         for k, v in query.items())
        return 200, LOGIN_PAGE.format(client=html.escape(query["client_id"]), hidden=hidden)

    def decide(self, query: dict[str, str], username: str, approve: bool) -> str:
        """The redirect back to the client: a code for a known user who approves, else an error."""
        answer = {"state": query.get("state", ""), "iss": self.issuer}
        user = self.users.get(username)
        if not approve or user is None:
            answer |= {"error": "access_denied", "error_description": "The user did not approve the sign-in"}
        else:
            code = secrets.token_urlsafe(24)
            with self._lock:
                self._codes[code] = Grant(query["client_id"], query["redirect_uri"], query["code_challenge"],
                                          query.get("nonce", ""), user, time.monotonic() + CODE_TTL_S)
            answer["code"] = code
        return f"{query['redirect_uri']}?{urlencode(answer)}"

    def token_response(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        """The token endpoint: (status, JSON body). A code is spent by its first use, whatever the outcome."""
        if form.get("grant_type") != "authorization_code":
            return self._refuse("unsupported_grant_type", "only authorization_code")
        with self._lock:
            grant = self._codes.pop(form.get("code", ""), None)
        if grant is None or grant.expires_at < time.monotonic():
            return self._refuse("invalid_grant", "unknown, used or expired code")
        if form.get("client_id") != grant.client_id or form.get("redirect_uri") != grant.redirect_uri:
            return self._refuse("invalid_grant", "client_id or redirect_uri differs from the authorization request")
        if not pkce_matches(form.get("code_verifier", ""), grant.challenge):
            return self._refuse("invalid_grant", "code_verifier does not match the code_challenge")
        user = grant.user
        access = self.keys.mint(user.sub, list(user.scopes), list(user.workspaces), ttl_s=user.ttl_s,
                                workspaces_claim=self.workspaces_claim)
        now = int(time.time())
        id_claims = {"iss": self.issuer, "sub": user.sub, "aud": grant.client_id, "iat": now, "exp": now + 300,
                     "nonce": self.forged_nonce or grant.nonce, "name": user.name or user.sub}
        signer = self.keys.current
        id_token = jwt.encode(id_claims, signer.private, algorithm=signer.alg, headers={"kid": signer.kid})
        expires_in = user.ttl_s if user.expires_in is None else user.expires_in
        return 200, {"access_token": access, "token_type": "Bearer", "expires_in": expires_in,
                     "id_token": id_token, "scope": " ".join(user.scopes)}

    def _refuse(self, error: str, description: str) -> tuple[int, dict[str, Any]]:
        self.refusals.append(description)
        return 400, {"error": error, "error_description": description}

    def start(self) -> OidcProvider:
        threading.Thread(target=self._server.serve_forever, name="oidc-provider", daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], provider: OidcProvider) -> None:
        self.provider = provider
        super().__init__(address, _Handler)


LOGIN_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Test provider sign-in</title>
<link rel="icon" href="data:,"></head><body><main><h1>Test provider</h1><p>{client} asks to sign you in.</p>
<form method="post" action="/authorize">{hidden}<label>Username <input name="username" autocomplete="off"></label>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button></form></main></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
        return

    @property
    def provider(self) -> OidcProvider:
        return self.server.provider

    def _cors(self) -> None:
        origin = self.headers.get("Origin")
        if origin in self.provider.origins():
            self.send_header("Access-Control-Allow-Origin", origin)
            self.send_header("Vary", "Origin")

    def _send(self, status: int, body: str, content_type: str, headers: dict[str, str] | None = None) -> None:
        raw = body.encode("utf-8")
        self.send_response(status)
        for name, value in {"Content-Type": content_type, "Cache-Control": "no-store",
                            "Content-Length": str(len(raw)), **(headers or {})}.items():
            self.send_header(name, value)
        self._cors()
        self.end_headers()
        self.wfile.write(raw)

    def _json(self, status: int, body: dict[str, Any]) -> None:
        self._send(status, json.dumps(body), "application/json")

    def _form(self) -> dict[str, str]:
        length = min(int(self.headers.get("Content-Length") or 0), 16 * 1024)
        return {k: v[-1] for k, v in parse_qs(self.rfile.read(length).decode("utf-8", "replace")).items()}

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/.well-known/openid-configuration":
            self._json(200, self.provider.discovery())
        elif parts.path == "/jwks.json":
            self._json(200, self.provider.keys.jwks())
        elif parts.path == "/authorize":
            self._send(*self.provider.login_page(query), "text/html; charset=utf-8")
        else:
            self._json(404, {"error": "not_found"})

    def do_OPTIONS(self) -> None:  # noqa: N802 (a CORS preflight)
        self._send(204, "", "text/plain", {"Access-Control-Allow-Methods": "POST, GET",
                                           "Access-Control-Allow-Headers": "Content-Type"})

    def do_POST(self) -> None:  # noqa: N802
        form = self._form()
        if self.path == "/token":
            self._json(*self.provider.token_response(form))
        elif self.path == "/authorize" and self.provider.authorize_problem(form) is None:
            target = self.provider.decide(form, form.get("username", ""), form.get("decision") == "approve")
            self._send(302, "", "text/plain", {"Location": target})
        else:
            self._json(400, {"error": "invalid_request"})
