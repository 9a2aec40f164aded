"""The embedded engine's knowledge graph: entities, relations, proofs, a term index with document frequencies.

Tables and shared helpers: schema.py; writes over the shared change set: write.py; reads: read.py; ranked entity
matching: match.py. The store is the shared front (adapters/graph_front.py) over those three parts.
"""

from __future__ import annotations

from agentkb.adapters.embedded.sqlite.db import Database, register_schema
from agentkb.adapters.embedded.sqlite.graph.match import SqliteGraphMatcher
from agentkb.adapters.embedded.sqlite.graph.read import SqliteGraphReader
from agentkb.adapters.embedded.sqlite.graph.schema import DDL
from agentkb.adapters.embedded.sqlite.graph.write import SqliteGraphWriter
from agentkb.adapters.graph_front import GraphStoreFront
from agentkb.services.graph.migration import migrate_graph

GRAPH_FORMAT = 2  # 2: the upstream workspace-knowledge-graph.v1 model (graph_migration); 1 or none: before it


class SqliteGraphStore(GraphStoreFront):
    """GraphStore over the shared embedded database."""

    def __init__(self, db: Database) -> None:
        super().__init__(SqliteGraphWriter(db), SqliteGraphReader(db), SqliteGraphMatcher(db))
        self._db = db  # the database the parts share (tests inspect it)


def migrate_on_open(db: Database) -> None:
    """Bring a database written before GRAPH_FORMAT onto it, once: graph_format records that it was done."""
    conn = db.connection()
    row = conn.execute("SELECT version FROM graph_format WHERE id = 1").fetchone()
    if row is not None and row[0] >= GRAPH_FORMAT:
        return
    migrate_graph(SqliteGraphStore(db))
    conn.execute("INSERT OR REPLACE INTO graph_format (id, version) VALUES (1, ?)", (GRAPH_FORMAT,))


register_schema("graph", DDL, migrate=migrate_on_open)
