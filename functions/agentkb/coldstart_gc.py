"""A Lambda cold start without the cyclic garbage collector: paused from the handler's first import until its first
response is built, then resumed with everything allocated so far frozen out of its reach.

Why: a cold start leaves about 125,000 objects tracked by the collector (modules, classes, pydantic and botocore
models), nearly all as long-lived as the process, yet the collector walks them again and again as they pile up:
150-190 collections, 60-85 ms of a search, recall or snapshot first response's CPU (bench/coldstart/run.py
--first-response, measured with gc.callbacks). Reference counting still frees everything else at once; what waits
is the cold start's cyclic garbage, which `gc.freeze` then keeps: 230-350 objects, 90-260 KB (shallow sizes,
measured after the recorded first responses). Later collections skip the frozen objects, so warm requests no
longer traverse the import-time heap either.

Only inside Lambda (AWS_LAMBDA_FUNCTION_NAME): a test, the CLI or the local gateway importing a handler keeps its
collector. This module reads that variable itself rather than through config.py: it must run before pydantic (which
config.py imports) is loaded. Standard library only, for the same reason.
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
_paused = False


def pause_collector() -> None:
    """Pause the cyclic collector in a Lambda execution environment (first thing a handler module does)."""
    global _paused
    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME") and gc.isenabled():
        gc.disable()
        _paused = True


def resume_collector() -> None:
    """Freeze what the cold start allocated and collect again from here on (idempotent)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def resume_after_first_response(handler: F) -> F:
    """The handler, resuming the collector once its first invocation has answered (or failed)."""

    @functools.wraps(handler)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        finally:
            resume_collector()

    return wrapped  # type: ignore[return-value]
