"""The embedded engine's exact vector scans run on one BLAS thread.

A scan is one matrix-vector product (chunks x 384 float32): memory-bound, so a second BLAS thread barely speeds
it, and OpenBLAS's idle threads then spin for a while after every call. On a small machine that spinning takes
the cores the next query's embedding and lexical leg need: through the search handler, interleaved per query on
the shared 2-core machine, one BLAS thread answered in 23.0 ms p50 against 31.2 ms with OpenBLAS's default two
(300 SciFact queries, docs/search.md). The setting is process-wide: every numpy product in the process gets it.
"""

from __future__ import annotations

from functools import cache


@cache
def limit_blas_threads() -> None:
    """Once per process: one thread for the BLAS library numpy links (OpenBLAS, MKL or BLIS)."""
    import numpy  # noqa: F401  (threadpoolctl limits only the libraries already loaded: numpy's BLAS first)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")
