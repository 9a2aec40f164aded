"""`GET /console/...`: the console's files from this package, same origin as the API, under a strict CSP.

The search function answers every path no route declares, so wrapping its handler serves the console on
`agentkb serve` and on the API's own stage alike (infra/components/rest_api.py routes `/console` there). Only
files of this folder with a known suffix are served; nothing else on disk is reachable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
PREFIX = "/console"
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
_NAME = re.compile(r"^(?:[a-z0-9][a-z0-9_-]*/)?[a-z0-9][a-z0-9_.-]*\.(?:html|js|css|svg)$")
# Everything from this origin only: no inline script or style, no other host, no framing, no form posts.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
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


def _answer(status: int, body: str, content_type: str, extra: dict[str, str] | None = None) -> dict[str, Any]:
    headers = {**HEADERS, "Content-Type": content_type, **(extra or {})}
    return {"statusCode": status, "headers": headers, "body": body, "isBase64Encoded": False}


def console_response(method: str, path: str, if_none_match: str | None = None) -> dict[str, Any] | None:
    """The console's answer for a path under /console, else None (the API answers it). A file carries an ETag
    (its content's hash): `no-cache` revalidates each load, and an unchanged file answers 304 without its body."""
    if path != PREFIX and not path.startswith(PREFIX + "/"):
        return None
    if method not in ("GET", "HEAD"):
        return _answer(405, "Method not allowed", "text/plain; charset=utf-8", {"Allow": "GET, HEAD"})
    if path == PREFIX:  # relative: under a stage (/prod/console) the browser keeps the stage
        return _answer(308, "", "text/plain; charset=utf-8", {"Location": "console/"})
    name = path[len(PREFIX) + 1:] or "index.html"
    file = ROOT / name
    if not _NAME.match(name) or not file.is_file() or not file.resolve().is_relative_to(ROOT):
        return _answer(404, "Not found", "text/plain; charset=utf-8")
    body = file.read_text(encoding="utf-8")
    etag = '"' + hashlib.sha256(body.encode("utf-8")).hexdigest()[:32] + '"'
    if if_none_match == etag:
        return _answer(304, "", TYPES[file.suffix], {"ETag": etag})
    return _answer(200, body, TYPES[file.suffix], {"ETag": etag})


def with_console(handler: Handler) -> Handler:
    """`handler`, with /console answered from this package before the API sees the request."""
    def serve(event: dict[str, Any], context: Any) -> dict[str, Any]:
        request = _request(event) if isinstance(event, dict) else None
        answer = console_response(*request) if request else None
        return answer if answer is not None else handler(event, context)

    return serve
