"""The gate every request passes before a resolver parses it: size, auth, rate limit, scope, media type, JSON.

Auth is an API key or an OAuth access token (services/access/credentials.py); direct invocations keep IAM.

It runs before Powertools' validation so that a 413 is decided before parsing and an unauthenticated caller
never learns anything about the body's validity (401 comes before 413, 400 and 415).
"""

from __future__ import annotations

import base64
import json
import re
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode

from agentkb.api.route import RouteSpec
from agentkb.composition import Ports
from agentkb.errors import BadRequest, DomainError, PayloadTooLarge, RateLimited, UnsupportedMediaType
from agentkb.models.digits import ascii_int
from agentkb.models.domain import Principal, RateDecision
from agentkb.services.access.credentials import authenticate_request, rate_identity, require_route_scope

MAX_JSON_DEPTH = 64


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _depth(value: Any, limit: int) -> int:
    """How deep a parsed value nests (counted up to just past `limit`)."""
    stack = [(value, 1)]
    deepest = 0
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


_STRINGS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')  # JSON strings: brackets inside them do not nest
# Brackets only, one kind: `{` nests like `[` (a mismatched pair is malformed JSON, for the parser to refuse).
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def nested_too_deep(raw: str) -> bool:
    """Whether JSON text nests deeper than MAX_JSON_DEPTH, read from its brackets before any parsing (the parser
    recurses, and past ~1,000 levels it fails as if the text were malformed).

    Pass k deletes the innermost `[]` pairs: what a pair encloses is k levels high once it survives k passes, so
    a run of MAX_JSON_DEPTH + 1 - k openers left after them is too deep. Bytes operations only: fast on 2 MiB."""
    if raw.count("[") + raw.count("{") <= MAX_JSON_DEPTH:  # the usual body: too few brackets to nest too deep
        return False
    brackets = _STRINGS.sub(b"", raw.encode("utf-8", "surrogatepass")).translate(_ONE_KIND, _NOT_BRACKETS)
    for passes in range(MAX_JSON_DEPTH):
        if b"[" * (MAX_JSON_DEPTH + 1 - passes) in brackets:
            return True
        brackets = brackets.replace(b"[]", b"")
        if not brackets:
            return False
    return b"[" in brackets


def too_deep() -> BadRequest:
    return BadRequest(f"JSON body is nested too deeply (at most {MAX_JSON_DEPTH} levels)",
                      details=[{"path": "body", "message": "too deep"}])


def parse_json_strict(raw: str) -> Any:
    """JSON without NaN/Infinity, duplicate keys, absurd nesting or unparseable numbers -> else 400."""
    if nested_too_deep(raw):
        raise too_deep()
    try:
        return json.loads(raw, parse_constant=_reject_constant, object_pairs_hook=_reject_duplicates)
    except (ValueError, RecursionError) as exc:
        raise BadRequest("Malformed JSON body", details=[{"path": "body", "message": "invalid JSON"}]) from exc


def check_depth(value: Any) -> None:
    """A direct invocation's body arrives parsed: the same nesting limit, before it is serialised for the gate."""
    if _depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise too_deep()


def header(headers: dict[str, Any] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return str(value)
    return None


def body_bytes(event: dict[str, Any]) -> bytes:
    body = event.get("body")
    if body is None:
        return b""
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except ValueError as exc:
            raise BadRequest("Body is not valid base64") from exc
    return body.encode("utf-8", "surrogatepass") if isinstance(body, str) else bytes(body)


def over_limit(event: dict[str, Any], limit: int) -> bool:
    """Whether the body exceeds `limit` bytes, judged from lengths alone: nothing of it is decoded or parsed.

    A declared Content-Length counts too: the local gateway drains an oversized body unread and sends the event
    without it, so the 413 is still answered here, after authentication, with the rate-limit headers.
    """
    declared = ascii_int((header(event.get("headers"), "content-length") or "").strip())
    if declared is not None and declared > limit:
        return True
    body = event.get("body")
    if not body:
        return False
    if not isinstance(body, str):
        return len(body) > limit
    if event.get("isBase64Encoded"):
        tail = body[-2:]
        padding = len(tail) - len(tail.rstrip("="))
        return len(body) * 3 // 4 - padding > limit
    if len(body) > limit or len(body) * 4 <= limit:  # UTF-8 takes one to four bytes per character
        return len(body) > limit
    return len(body.encode("utf-8", "surrogatepass")) > limit


def rate_headers(decision: RateDecision) -> dict[str, str]:
    reset = datetime.fromtimestamp(decision.reset_epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"X-RateLimit-Limit": str(decision.limit), "X-RateLimit-Remaining": str(decision.remaining),
            "X-RateLimit-Reset": reset}


OB1_PREFIX = "/ob1/"


def presented_key(event: dict[str, Any], route: RouteSpec) -> str | None:
    """X-API-Key; on the OB1 routes also OB1's carriers, `x-brain-key` or `?key=` (dropped from the event at once,
    so a key in a URL reaches neither a resolver nor a log line)."""
    presented = header(event.get("headers"), "x-api-key")
    if not route.path.startswith(OB1_PREFIX):
        return presented
    query = event.get("queryStringParameters") or {}
    in_query = query.pop("key", None) if isinstance(query, dict) else None
    (event.get("multiValueQueryStringParameters") or {}).pop("key", None)
    if event.get("rawQueryString"):  # HTTP API v2
        event["rawQueryString"] = urlencode([(k, v) for k, v in parse_qsl(event["rawQueryString"]) if k != "key"])
    return presented or header(event.get("headers"), "x-brain-key") or in_query


def empty_query_values(event: dict[str, Any], route: RouteSpec) -> None:
    """`?project_id=` is refused (400, "omit the parameter instead"; /openapi.json says `minLength: 1`), except on
    the OB1 routes: OB1's server reads an empty filter as no filter (`if (project_id)`), so there it is dropped."""
    query = event.get("queryStringParameters") or {}
    empty = [name for name, value in query.items() if value in ("", None)]
    if not empty:
        return
    if not route.path.startswith(OB1_PREFIX):
        raise BadRequest("A query parameter was sent with no value",
                         details=[{"path": f"query.{empty[0]}", "message": "omit the parameter instead"}])
    multi = event.get("multiValueQueryStringParameters") or {}
    for name in empty:
        query.pop(name)
        kept = [value for value in multi.pop(name, None) or [] if value not in ("", None)]
        if kept:  # `?a=x&a=`: the last value that says something
            query[name], multi[name] = kept[-1], kept
    if event.get("rawQueryString"):  # HTTP API v2; parse_qsl leaves blank values out
        event["rawQueryString"] = urlencode(parse_qsl(event["rawQueryString"]))


def check_request(event: dict[str, Any], route: RouteSpec, ports: Ports,
                  direct_principal: Principal | None) -> tuple[Principal | None, RateDecision | None]:
    """Everything decided before parsing; returns the principal and rate decision, or raises a DomainError.

    The size is decided first, from lengths only; its 413 is answered after authentication (401 first), so that
    a valid key's 413 carries the rate-limit headers like every other authenticated response.
    """
    oversized = over_limit(event, ports.settings.max_body_bytes)
    empty_query_values(event, route)
    principal, decision = None, None
    if route.scope is not None:
        if direct_principal is not None:
            principal = direct_principal
        else:
            principal = authenticate_request(ports.keys, ports.secrets, ports.settings, presented_key(event, route),
                                             header(event.get("headers"), "authorization"))
        decision = ports.rate_limiter.hit(rate_identity(principal, direct_principal is not None),
                                          ports.settings.rate_limit_per_minute, time.time())
        if not decision.allowed:
            retry = str(decision.retry_after_s)
            raise RateLimited(details={"retryAfter": rate_headers(decision)["X-RateLimit-Reset"]},
                              headers={"Retry-After": retry, **rate_headers(decision)})
    try:
        if oversized:
            raise PayloadTooLarge()
        raw = body_bytes(event)
        if principal is not None and route.scope is not None:
            require_route_scope(principal, route.scope)
        if route.method in ("POST", "PUT", "PATCH"):
            _check_json_body(event, raw, direct_principal is not None)
    except DomainError as exc:  # every authenticated response carries the rate-limit headers, errors included
        if decision is not None:
            exc.headers = {**rate_headers(decision), **exc.headers}
        raise
    return principal, decision


def _check_json_body(event: dict[str, Any], raw: bytes, direct: bool) -> None:
    content_type = (header(event.get("headers"), "content-type") or "").split(";")[0].strip().lower()
    if raw and not direct and content_type != "application/json" and not content_type.endswith("+json"):
        raise UnsupportedMediaType()
    if not raw.strip():
        raise BadRequest("A JSON request body is required", details=[{"path": "body", "message": "required"}])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest("Body is not valid UTF-8", details=[{"path": "body", "message": "invalid UTF-8"}]) from exc
    parsed = parse_json_strict(text)
    if not isinstance(parsed, dict):
        raise BadRequest("The JSON body must be an object", details=[{"path": "body", "message": "expected object"}])
    event["body"], event["isBase64Encoded"] = text, False
