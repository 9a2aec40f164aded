"""GraphStore on DynamoDB (graph table, string pk/sk, no secondary index): the same answers as SqliteGraphStore.

The table as the parts share it: base.py; writes over the shared change set: write.py; reads: read.py; ranked
entity matching: match.py. The store is the shared front (adapters/graph_front.py) over those three parts.

Items (`ws` = workspace id; `\\x1f` separates a name from an id; JSON arrays make composite sort keys unambiguous):
  G#<ws>            #META                 version, entity_count, hash, hash_version (source hash cache)
  G#<ws>            E#<id>                entity: doc (public JSON), canon (canonical JSON, hashed)
  G#<ws>            R#<id>                relation: endpoints, trust/confidence/rank, weight, proven, proof_ids, canon
  G#<ws>            P#<id>                proof: doc, canon (timestamp-free)
  G#<ws>            V#<relation id>       the project links a relation created (so a refresh can delete them)
  GID#<ws>          ["kind","project","key"]   entity_id: identity uniqueness (conditional put)
  GN#<ws>           <name_lc>\\x1f<id>     exact/prefix tiers: one item per distinct label / identity key / alias
  GT#<ws>#<term>    #DF                   df: document frequency of the term
  GT#<ws>#<term>    E#<id>                posting: weight, kind, label, project_id (denormalised for ranking)
  GL#<ws>#<project> ["entity","via"]      project link: a workspace entity joined to the project by a proven relation
  GAR#<ws>#<entity> <rank:02d>#<rel id>   adjacency of proven relations (both directions), ordered trust/confidence
                                          rank then id: proven_relations is one Query with Limit = per-entity cap
  GAW#<ws>#<entity> <desc weight>#<rel id>  adjacency of every relation ordered by weight desc then id: neighbours is
                                          one Query (sk < bound of min_weight) with Limit = per-entity cap
A self-loop gets only its outgoing adjacency item (the SQL legs exclude `to = e AND from = e`).

Writes: one upsert reads the stored entities/relations/proofs of the batch (consistent BatchGetItem), derives every
item to put/delete, and writes them with TransactWriteItems. DynamoDB caps a transaction at 100 actions (and
4 MB), so a batch needing more is written as several transactions in a fixed order (identity claims, derived
items, primary items, then the #META version bump): such a batch is NOT atomic on DynamoDB. A crash midway leaves
the primary items (whose canon is what change detection compares) at their old state, so retrying the same batch
rewrites everything; readers may briefly see a partial batch. The embedded engine stays fully atomic.

Reads that are unbounded by nature (term postings of a matching term, name prefixes, neighbourhood totals, the
source hash over the whole graph) are paged Queries over one partition each: the same work as the SQL version.
"""

from __future__ import annotations

from agentkb.adapters.aws.dynamodb.graph.base import STORE, TRANSACTION_LIMIT, DynamoDbGraphTable, descending_weight
from agentkb.adapters.aws.dynamodb.graph.match import DynamoDbGraphMatcher
from agentkb.adapters.aws.dynamodb.graph.read import DynamoDbGraphReader
from agentkb.adapters.aws.dynamodb.graph.write import DynamoDbGraphWriter
from agentkb.adapters.aws.dynamodb.tables import ClientFactory
from agentkb.adapters.graph_front import GraphStoreFront

__all__ = ["STORE", "TRANSACTION_LIMIT", "DynamoDbGraphStore", "descending_weight"]


class DynamoDbGraphStore(GraphStoreFront):
    """GraphStore over the graph table."""

    def __init__(self, client: ClientFactory, table: str) -> None:
        self.table = table
        self.db = DynamoDbGraphTable(client, table)
        super().__init__(DynamoDbGraphWriter(self.db), DynamoDbGraphReader(self.db), DynamoDbGraphMatcher(self.db))
