"""The recall query embedding with a bounded wait: every failure becomes EmbeddingUnavailable with a contract code."""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from agentkb.errors import DependencyError, EmbeddingUnavailable
from agentkb.ports.embedding import Embedder

# vec_degraded_code values (recall-response.schema.json); the first three are worth retrying.
RETRYABLE_CODES = frozenset({"timeout", "slot_exhausted", "cancelled"})
DEGRADED_CODES = frozenset({"embedding_failed", "slot_exhausted", "oauth_quota", "backend_mismatch", "dim_zero",
                            "cancelled", "timeout", "fallback_fts_only"})
EMBED_SLOTS = 4

_pool = ThreadPoolExecutor(max_workers=EMBED_SLOTS, thread_name_prefix="agentkb-recall-embed")
_slots = threading.BoundedSemaphore(EMBED_SLOTS)


def _release(_: object) -> None:
    _slots.release()


def embed_query_bounded(embedder: Embedder, text: str, timeout_s: float) -> list[float]:
    """The query vector, or EmbeddingUnavailable (timeout, slot_exhausted, cancelled, embedding_failed, dim_zero)."""
    # A hung backend keeps its slot until it returns: once every slot is stuck, fail fast instead of queueing.
    if not _slots.acquire(blocking=False):
        raise EmbeddingUnavailable("every embedding slot is busy", code="slot_exhausted", retryable=True)
    try:
        future = _pool.submit(embedder.embed_query, text)
    except RuntimeError as exc:  # the pool is shutting down (interpreter exit)
        _slots.release()
        raise EmbeddingUnavailable("the embedding pool is shut down", code="cancelled", retryable=True) from exc
    future.add_done_callback(_release)
    try:
        vector = future.result(timeout=timeout_s)
    except FutureTimeout as exc:
        future.cancel()
        raise EmbeddingUnavailable(f"the query embedding took longer than {int(timeout_s * 1000)} ms",
                                   code="timeout", retryable=True) from exc
    except CancelledError as exc:
        raise EmbeddingUnavailable("the query embedding was cancelled", code="cancelled", retryable=True) from exc
    except EmbeddingUnavailable as exc:
        code = exc.code if exc.code in DEGRADED_CODES else "embedding_failed"
        raise EmbeddingUnavailable(str(exc), code=code, retryable=code in RETRYABLE_CODES) from exc
    except DependencyError as exc:
        raise EmbeddingUnavailable(f"embedding failed: {exc}", code="embedding_failed") from exc
    except Exception as exc:  # any backend bug degrades the recall; the type name is all we report
        raise EmbeddingUnavailable(f"embedding failed: {type(exc).__name__}", code="embedding_failed") from exc
    if not vector:
        raise EmbeddingUnavailable("the embedding backend returned an empty vector", code="dim_zero")
    return list(vector)
