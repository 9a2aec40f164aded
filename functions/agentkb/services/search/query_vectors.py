"""Query embeddings remembered per embedding model: a repeated query text skips the model (bounded LRU)."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from agentkb.ports.embedding import Embedder

DEFAULT_CAPACITY = 1024  # per model: 1024 x 384 floats as Python lists is about 13 MB at most


class QueryVectorCache:
    """Least-recently-used query vectors, one bounded table per embedder instance and (model, dimension).

    Tables live as long as their embedder: a new embedder (a rebuilt container, a test's fake) starts empty.
    """

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.capacity = capacity
        self._tables: weakref.WeakKeyDictionary[Embedder, dict[tuple[str, int], OrderedDict[str, list[float]]]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def embed(self, embedder: Embedder, text: str) -> list[float]:
        """The query's vector from the table, or from the embedder (then remembered)."""
        key = (embedder.model_id, embedder.dimension)
        with self._lock:
            try:
                table = self._tables.setdefault(embedder, {}).setdefault(key, OrderedDict())
            except TypeError:  # an embedder that cannot be weakly referenced is simply not cached
                return embedder.embed_query(text)
            vector = table.get(text)
            if vector is not None:
                table.move_to_end(text)
                return vector
        vector = embedder.embed_query(text)  # outside the lock: two misses of one text may both embed it
        with self._lock:
            table[text] = vector
            table.move_to_end(text)
            while len(table) > self.capacity:
                table.popitem(last=False)
        return vector

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()
