"""`GET /console/...`: the console's files from this package, same origin as the API, under a strict CSP.

The search function answers every path no route declares, so wrapping its handler serves the console on
`agentkb serve` and on the API's own stage alike (infra/components/rest_api.py routes `/console` there). Only
files of this folder with a known suffix are served; nothing else on disk is reachable.

`GET /console/config.json` is the one document made from the settings: the OIDC issuer and public client the
sign-in page offers (or `"oidc": null`), never a secret. Only then does `connect-src` name one more origin: the
issuer's, for its discovery document and token endpoint.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentkb.config import Settings, get_settings

ROOT = Path(__file__).resolve().parent
PREFIX = "/console"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
_NAME = re.compile(r"^(?:[a-z0-9][a-z0-9_-]*/)?[a-z0-9][a-z0-9_.-]*\.(?:html|js|css|svg)$")
# Everything from this origin only: no inline script or style, no other host, no framing, no form posts.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
CONFIG = "config.json"
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "X-Frame-Options": "DENY", "Cross-Origin-Opener-Policy": "same-origin",
           "Cache-Control": "no-cache"}
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def _request(event: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """(method, path, If-None-Match) of a REST v1 or HTTP API v2 event under /console; None for any other event
    (an API request, a direct invocation), decided from the path before anything else is read."""
    if "httpMethod" in event:
        method, path = str(event["httpMethod"]), str(event.get("path") or "")
    else:
        http = (event.get("requestContext") or {}).get("http")
        if not isinstance(http, dict) or "rawPath" not in event:
            return None
        method, path = str(http.get("method", "")), str(event["rawPath"])
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        return None
    tag = next((v for k, v in (event.get("headers") or {}).items() if str(k).lower() == "if-none-match"), None)
    return method, path, tag


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def console_oidc(settings: Settings) -> dict[str, Any] | None:
    """What the sign-in page needs to offer the issuer (authorization code + PKCE, a public client), or None."""
    if settings.oidc_issuer is None or settings.oidc_console_client_id is None:
        return None
    prefix = settings.oidc_scope_prefix
    return {"issuer": settings.oidc_issuer, "clientId": settings.oidc_console_client_id,
            "name": settings.oidc_console_name or urlsplit(settings.oidc_issuer).netloc,
            "scope": settings.oidc_console_scope or f"openid {prefix}api:read {prefix}api:write",
            # workspaces as scopes (AGENTKB_OIDC_WORKSPACES_CLAIM=scope): the console asks for the one signed into
            "workspaceScope": f"{prefix}workspace:" if settings.oidc_workspaces_claim == "scope" else None}


def policy(settings: Settings) -> str:
    """The CSP: this origin only, and the issuer's origin for `connect-src` when the console signs in with it."""
    oidc = console_oidc(settings)
    if oidc is None:
        return CSP
    return CSP.replace("connect-src 'self'", f"connect-src 'self' {_origin(oidc['issuer'])}")


def _answer(settings: Settings, status: int, body: str, content_type: str,
            extra: dict[str, str] | None = None) -> dict[str, Any]:
    headers = {**HEADERS, "Content-Security-Policy": policy(settings), "Content-Type": content_type, **(extra or {})}
    return {"statusCode": status, "headers": headers, "body": body, "isBase64Encoded": False}


def _body(name: str, settings: Settings) -> tuple[str, str] | None:
    """(body, content type) of a console file, or of the config document; None when there is no such file."""
    if name == CONFIG:
        return json.dumps({"oidc": console_oidc(settings)}, sort_keys=True), "application/json"
    file = ROOT / name
    if not _NAME.match(name) or not file.is_file() or not file.resolve().is_relative_to(ROOT):
        return None
    return file.read_text(encoding="utf-8"), TYPES[file.suffix]


def console_response(method: str, path: str, if_none_match: str | None = None,
                     settings: Settings | None = None) -> dict[str, Any] | None:
    """The console's answer for a path under /console, else None (the API answers it). A file carries an ETag
    (its content's hash): `no-cache` revalidates each load, and an unchanged file answers 304 without its body."""
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        return None
    settings = settings or get_settings()
    if method not in ("GET", "HEAD"):
        return _answer(settings, 405, "Method not allowed", "text/plain; charset=utf-8", {"Allow": "GET, HEAD"})
    if path == PREFIX:  # relative: under a stage (/prod/console) the browser keeps the stage
        return _answer(settings, 308, "", "text/plain; charset=utf-8", {"Location": "console/"})
    name = path[len(PREFIX) + 1:] or "index.html"
    found = _body(name, settings)
    if found is None:
        return _answer(settings, 404, "Not found", "text/plain; charset=utf-8")
    body, content_type = found
    etag = '"' + hashlib.sha256(body.encode("utf-8")).hexdigest()[:32] + '"'
    if if_none_match == etag:
        return _answer(settings, 304, "", content_type, {"ETag": etag})
    return _answer(settings, 200, body, content_type, {"ETag": etag})


def with_console(handler: Handler) -> Handler:
    """`handler`, with /console answered from this package before the API sees the request."""
    def serve(event: dict[str, Any], context: Any) -> dict[str, Any]:
        request = _request(event) if isinstance(event, dict) else None
        answer = console_response(*request) if request else None
        return answer if answer is not None else handler(event, context)

    return serve
