"""The embedded engine's knowledge graph: entities, relations, proofs, a term index with document frequencies.

Tables and shared plumbing: sqlite_graph_schema; writes over the shared change set: sqlite_graph_write; reads:
sqlite_graph_read; ranked entity matching: sqlite_graph_match.
"""

from __future__ import annotations

from agentkb.adapters.embedded.sqlite_graph_match import SqliteGraphMatcher
from agentkb.adapters.embedded.sqlite_graph_read import SqliteGraphReader
from agentkb.adapters.embedded.sqlite_graph_write import SqliteGraphWriter


class SqliteGraphStore(SqliteGraphWriter, SqliteGraphReader, SqliteGraphMatcher):
    """GraphStore over the shared embedded database."""
