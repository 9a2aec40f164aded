"""Paged lists: limits and the opaque cursor (base64url JSON of the last row's sort key), for services and adapters."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from agentkb.errors import BadRequest

PAGE_DEFAULT = 50
PAGE_MAX = 200
# What /openapi.json says of every cursor: base64url as issued (padded or not); what it holds is checked on decoding
CURSOR_PATTERN = r"^[A-Za-z0-9_-]+={0,2}$"
CURSOR_DESCRIPTION = "The previous page's nextCursor, unchanged; any other value is a 400 BAD_REQUEST"


def encode_cursor(position: Any) -> str:
    raw = json.dumps(position, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def invalid_cursor() -> BadRequest:
    return BadRequest("Invalid cursor", details=[{"path": "cursor", "message": "not a cursor from this API"}])


def decode_cursor(cursor: str, valid: Callable[[Any], bool]) -> Any:
    """The position a cursor holds; a cursor this engine did not make (or of another shape) is a 400."""
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, binascii.Error) as exc:
        raise invalid_cursor() from exc
    if not valid(value):
        raise invalid_cursor()
    return value


def is_string_pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(p, str) for p in value)
