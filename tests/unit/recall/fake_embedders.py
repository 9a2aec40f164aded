"""Fake embedders for recall tests: deterministic bag-of-words vectors, and one that fails or hangs on queries."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np


class HashEmbedder:
    """Deterministic bag-of-words vectors (fast, no model): texts sharing words are close."""

    model_id = "test-hash"
    dimension = 64

    def _vector(self, text: str) -> list[float]:
        v = np.zeros(self.dimension, np.float32)
        for word in text.lower().split():
            v[int(hashlib.md5(word.strip(".,:;!?").encode()).hexdigest(), 16) % self.dimension] += 1.0
        norm = float(np.linalg.norm(v)) or 1.0
        return (v / norm).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]


class FailingEmbedder(HashEmbedder):
    """Writes embed fine; queries fail with an exception or hang past the timeout."""

    def __init__(self, error: Exception | None = None, hang: threading.Event | None = None) -> None:
        self.error, self.hang = error, hang
        self.entered = 0  # query calls that started (a call cancelled before a worker took it never does)

    def embed_query(self, text: str) -> list[float]:
        self.entered += 1
        if self.hang is not None:
            self.hang.wait(5)
        if self.error is not None:
            raise self.error
        return super().embed_query(text)
