"""The local server's malloc arenas: glibc's default costs the threaded gateway ~240 MB of RSS that holds nothing.

glibc gives a thread that finds the malloc lock taken an arena of its own, up to 8 per core, and an arena keeps the
pages it once held. The gateway runs a thread per connection, the search legs, the recall embedder and ONNX
Runtime's pools (17 threads under 8 clients): in bench/load/memory_steps.py the steady workload grew RSS by 242 MB with
the default and by 30 MB with 2 arenas, at the same throughput, while the Python heap grew by about 1 MB in both.
Lambda runs one request at a time per process, so the functions keep glibc's default.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_ARENA_MAX = -8  # glibc's malloc.h
DEFAULT_ARENAS = 2


def cap_malloc_arenas(arenas: int = DEFAULT_ARENAS) -> bool:
    """At most `arenas` malloc arenas from now on (call it before starting threads); False where there is no glibc
    (musl, macOS) or `arenas` is 0 (keep the default)."""
    if arenas <= 0:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_ARENA_MAX, arenas))
    except (OSError, AttributeError):  # no C library to load, or one without mallopt
        return False
