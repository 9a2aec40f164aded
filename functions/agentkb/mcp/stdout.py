"""stdout belongs to the protocol: `agentkb mcp` takes fd 1 for itself before anything else can write to it.

On stdio every stdout line must be a JSON-RPC message. The Lambda handlers the in-process backend runs print
CloudWatch EMF lines (`@metrics.log_metrics`) and log through Powertools onto stdout, as Lambda wants; the SDK's
stdio transport diverts fd 1 only while it serves, so Python's block-buffered `sys.stdout` still flushed those
lines onto the wire at exit. Here the wire moves to a private descriptor for the whole process and fd 1 (with
`sys.stdout`) points at stderr for good: a print, a logger, a child process or a C library that writes to
"stdout" lands on stderr, whatever the environment. Over `--http` the wire carries only the announced address.
"""

from __future__ import annotations

import io
import os
import sys
from typing import BinaryIO


def quiet_metrics() -> None:
    """EMF metric lines are for CloudWatch in Lambda; an MCP server has no reader for them. Off unless the
    environment says otherwise (then they go to stderr, like every other non-protocol line)."""
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")


def claim_stdout() -> BinaryIO:
    """The process's real stdout as a private binary stream; fd 1 and `sys.stdout` write to stderr from now on.

    Anything already buffered in `sys.stdout` is flushed first, to the wire (nothing should be there yet)."""
    sys.stdout.flush()
    wire = os.dup(1)  # non-inheritable: children get the redirected fd 1, never the wire
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(wire, "wb")


def text_wire(wire: BinaryIO) -> io.TextIOWrapper:
    """UTF-8 text over the wire, newline-terminated messages written as they are (no platform translation)."""
    return io.TextIOWrapper(wire, encoding="utf-8", newline="\n", write_through=True)
