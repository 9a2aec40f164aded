"""Request bodies as HTTP/1.1 clients send them: a Content-Length, or the chunked transfer coding (RFC 9112 7).

Node's fetch with a stream, Go's client with an unknown length and curl's `-H "Transfer-Encoding: chunked"` send
chunks. The limit is enforced while reading: a chunk whose declared size passes it is refused before its data is
read, so an endless body costs the server at most the limit.
"""

from __future__ import annotations

import re
from email.message import Message
from io import BufferedIOBase

from agentkb.models.digits import ascii_int

MAX_LINE = 4096  # a chunk-size line with its extensions, or one trailer line
MAX_TRAILER_LINES = 100
_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")


class Framing(ValueError):
    """The body's framing is malformed or ambiguous: 400, and the connection closes (its end is unknown)."""


class TooLarge(Exception):
    """The body passed the limit: `received` counts the bytes declared so far (more than the limit)."""

    def __init__(self, received: int) -> None:
        super().__init__(received)
        self.received = received


class Truncated(ConnectionError):
    """The client closed the connection before the body ended: nothing to answer, nothing to dispatch."""


def is_chunked(headers: Message) -> bool:
    """Whether the body is chunked; Framing for a transfer coding this server cannot read (RFC 9112 6.1, 6.3)."""
    values = headers.get_all("Transfer-Encoding") or []
    codings = [c.strip().lower() for value in values for c in value.split(",") if c.strip()]
    if not codings:
        return False
    if codings != ["chunked"]:
        raise Framing("only the chunked transfer coding is supported, once and alone")
    if headers.get("Content-Length") is not None:  # request smuggling's shape: two lengths that may disagree
        raise Framing("Transfer-Encoding and Content-Length must not both be sent")
    return True


def declared_length(headers: Message) -> int:
    """The Content-Length (0 when absent); Framing for a malformed or self-contradicting one."""
    values = {value.strip() for value in headers.get_all("Content-Length") or []}
    if not values:
        return 0
    length = ascii_int(values.pop()) if len(values) == 1 else None
    if length is None:
        raise Framing("Content-Length must be one non-negative integer")
    return length


def read_exact(rfile: BufferedIOBase, length: int) -> bytes:
    data = rfile.read(length)
    if len(data) < length:
        raise Truncated("the connection closed inside the body")
    return data


def read_chunked(rfile: BufferedIOBase, limit: int) -> bytes:
    """The decoded body; chunk extensions and trailer fields are read and ignored."""
    parts: list[bytes] = []
    received = 0
    while size := _chunk_size(_line(rfile)):
        received += size
        if received > limit:
            raise TooLarge(received)
        parts.append(read_exact(rfile, size))
        if _line(rfile):
            raise Framing("chunk data must end with CRLF")
    for _ in range(MAX_TRAILER_LINES + 1):
        if not _line(rfile):
            return b"".join(parts)
    raise Framing("too many trailer fields")


def _line(rfile: BufferedIOBase) -> bytes:
    raw = rfile.readline(MAX_LINE + 1)
    if not raw:
        raise Truncated("the connection closed inside the chunked body")
    if not raw.endswith(b"\n"):
        raise Framing("a chunk line is too long" if len(raw) > MAX_LINE else "a chunk line has no CRLF")
    return raw.rstrip(b"\r\n")


def _chunk_size(line: bytes) -> int:
    text = line.split(b";", 1)[0].strip(b" \t")  # `size;ext=value`: extensions are tolerated, never interpreted
    if not _CHUNK_SIZE.fullmatch(text):
        raise Framing("a chunk size must be hexadecimal digits")
    return int(text, 16)
