"""The embedded engine's vector scans run on one BLAS thread (adapters/embedded/blas_threads.py says why)."""

from __future__ import annotations

from pathlib import Path

from threadpoolctl import threadpool_info, threadpool_limits

from agentkb.adapters.embedded.builder import EmbeddedBuilder
from agentkb.adapters.embedded.vectors import blas_threads
from agentkb.config import Settings


def test_opening_the_embedded_database_limits_blas_to_one_thread(tmp_path: Path) -> None:
    # Given a process whose BLAS may use two threads (as OpenBLAS does by default on a 2-core machine)
    with threadpool_limits(limits=2, user_api="blas"):
        blas_threads.limit_blas_threads.cache_clear()
        # When the embedded engine opens its database
        assert EmbeddedBuilder(Settings(data_dir=tmp_path)).database is not None
        # Then every BLAS library numpy loaded runs one thread
        blas = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]
        assert blas and all(lib["num_threads"] == 1 for lib in blas)
