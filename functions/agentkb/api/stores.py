"""The memory and graph stores of the configured backend, for every route that reads or writes them.

Their own module, so that a function importing them (recall, snapshot) does not import the graph or memory
routes and the request models those declare.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from agentkb.adapters.factory import get_container
from agentkb.ports import GraphStore, MemoryStore


def graph_store() -> GraphStore:
    """The container's graph store when it has one, else the embedded store over the container's database."""
    container = get_container()
    store = getattr(container, "graph", None)
    return store if store is not None else _embedded_graph(container.db)


def memory_store() -> MemoryStore:
    """The container's memory store when it has one, else the embedded store over the container's database."""
    container = get_container()
    store = getattr(container, "memories", None)
    return store if store is not None else _embedded_memories(container.db)


@lru_cache(maxsize=4)
def _embedded_graph(db: Any) -> GraphStore:
    from agentkb.adapters.embedded.sqlite_graph import SqliteGraphStore

    return SqliteGraphStore(db)


@lru_cache(maxsize=4)
def _embedded_memories(db: Any) -> MemoryStore:
    from agentkb.adapters.embedded.sqlite_memory import SqliteMemoryStore

    return SqliteMemoryStore(db)
