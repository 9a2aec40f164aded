"""The AWS engine's shadow generation (ports/index.py ShadowGenerations): a KB re-embedded under another profile.

The pending target lives on the KB's catalog item (`pending_model`, `pending_dim`); the shadow is the KB's chunks
(and document records) in the target profile's OpenSearch index, which searches of the KB do not read while its
item names the old profile. The switch is one DynamoDB transaction: the item's profile becomes the target (on the
condition that this very switch is pending) and the KB's version moves; the next catalog read sends the KB's legs
to the new index (OpenSearchIndex resolves a KB's index from the profile the catalog last read). The old profile's
chunks of the KB are deleted after. Staging is idempotent (a document's shadow is replaced whole), and the staged
revisions are not recorded: a re-run after a crash stages every document again. The switch also records the old
profile (`previous_model`, `previous_dim`) until the drop has finished, so a run killed between the two is finished
by the next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.catalog import DynamoDbCatalog
from agentkb.adapters.aws.dynamodb.tables import get_n, get_s, key, n, s
from agentkb.adapters.aws.opensearch.documents import documents_index
from agentkb.adapters.aws.opensearch.dsl import index_name
from agentkb.adapters.aws.opensearch.index import BULK_BATCH, OpenSearchIndex
from agentkb.adapters.aws.opensearch.queries import chunk_source, tag_slots
from agentkb.errors import Conflict
from agentkb.models.domain import Chunk, Document, EmbeddingProfile, KnowledgeBase


class OpenSearchShadowGenerations:
    """ShadowGenerations port on the catalog table and the collection's per-profile indexes."""

    # A request that read the KB before the switch searches the old index: the drop waits out the longest function
    # that searches (snapshot, 29 s; infra/constants.py).
    settle_s = 30.0

    def __init__(self, index: OpenSearchIndex, catalog: DynamoDbCatalog) -> None:
        self.index = index
        self.catalog = catalog

    def _item_key(self, kb: KnowledgeBase) -> dict[str, Any]:
        return key(f"WS#{kb.workspace_id}", f"KB#{kb.id}")

    def pending(self, kb: KnowledgeBase) -> EmbeddingProfile | None:
        item = self.catalog.get_item(f"WS#{kb.workspace_id}", f"KB#{kb.id}") or {}
        model = get_s(item, "pending_model")
        return EmbeddingProfile(model, get_n(item, "pending_dim")) if model else None

    def begin(self, kb: KnowledgeBase, target: EmbeddingProfile) -> None:
        began = self.catalog.conditional(lambda: self.catalog.client.update_item(
            TableName=self.catalog.table, Key=self._item_key(kb),
            UpdateExpression="SET pending_model = :m, pending_dim = :d",
            ConditionExpression="attribute_exists(pk) AND (attribute_not_exists(pending_model)"
                                " OR (pending_model = :m AND pending_dim = :d))",
            ExpressionAttributeValues={":m": s(target.model), ":d": n(target.dimension)}))
        if not began:
            other = self.pending(kb)
            label = f"{other.model} ({other.dimension}-d)" if other else "another profile"
            raise Conflict(f"A switch of this knowledge base to {label} is pending: finish it with --embedding-model "
                           f"{other.model}@{other.dimension}" if other else f"A switch to {label} is pending",
                           details={"pendingModel": other.model, "pendingDimension": other.dimension} if other
                           else None)

    def staged(self, kb: KnowledgeBase, target: EmbeddingProfile) -> dict[str, int]:
        return {}  # not recorded on this engine: a re-run stages every document again (module docstring)

    def stage(self, kb: KnowledgeBase, target: EmbeddingProfile, document: Document,
              chunks: Sequence[Chunk]) -> None:
        name = self.index.ensure_index(target)
        self.index._delete_revisions(name, kb, document.id, None)
        slots = tag_slots(kb, document)
        for start in range(0, len(chunks), BULK_BATCH):
            lines: list[dict[str, Any]] = []
            for chunk in chunks[start:start + BULK_BATCH]:
                lines += [{"index": {"_index": name}}, chunk_source(kb, document, chunk, slots)]
            self.index._bulk(name, lines)
        self.index._write_document_record(name, kb, document, chunks, slots)

    def unstage(self, kb: KnowledgeBase, target: EmbeddingProfile, document_id: str) -> None:
        self.index._delete_revisions(index_name(self.index.prefix, target), kb, document_id, None)

    def switch(self, kb: KnowledgeBase, target: EmbeddingProfile) -> list[str]:
        values = {":m": s(target.model), ":d": n(target.dimension)}
        self.catalog.transact([
            {"Update": {"TableName": self.catalog.table, "Key": self._item_key(kb),
                        "UpdateExpression": "SET model = :m, dim = :d, previous_model = :om, previous_dim = :od"
                                            " REMOVE pending_model, pending_dim",
                        "ConditionExpression": "pending_model = :m AND pending_dim = :d",
                        "ExpressionAttributeValues": {**values, ":om": s(kb.profile.model),
                                                      ":od": n(kb.profile.dimension)}}},
            {"Update": {"TableName": self.catalog.table, "Key": key(f"KB#{kb.id}", "#KB"),
                        "UpdateExpression": "ADD version :one", "ExpressionAttributeValues": {":one": n(1)}}},
        ], conflict=f"No switch of this knowledge base to {target.model} ({target.dimension}-d) is pending")
        self.catalog.get_knowledge_base(kb.workspace_id, kb.id)  # this process's legs follow the new profile
        return []  # writes across the switch are caught up by the caller, by revision

    def abandon(self, kb: KnowledgeBase, target: EmbeddingProfile) -> None:
        self.drop(kb, target)  # the KB's records in the target's index are its shadow
        self.catalog.conditional(lambda: self.catalog.client.update_item(
            TableName=self.catalog.table, Key=self._item_key(kb), UpdateExpression="REMOVE pending_model, pending_dim",
            ConditionExpression="attribute_exists(pk)"))  # a KB already deleted has nothing left to remove

    def drop(self, kb: KnowledgeBase, old: EmbeddingProfile) -> None:
        name = index_name(self.index.prefix, old)
        self.index._delete_chunks(name, kb, None)
        self.index._delete_chunks(documents_index(name), kb, None)
        self.catalog.conditional(lambda: self.catalog.client.update_item(
            TableName=self.catalog.table, Key=self._item_key(kb),
            UpdateExpression="REMOVE previous_model, previous_dim",
            ConditionExpression="previous_model = :om AND previous_dim = :od",
            ExpressionAttributeValues={":om": s(old.model), ":od": n(old.dimension)}))  # else: not this drop's

    def leftover(self, kb: KnowledgeBase) -> EmbeddingProfile | None:
        item = self.catalog.get_item(f"WS#{kb.workspace_id}", f"KB#{kb.id}") or {}
        model = get_s(item, "previous_model")
        return EmbeddingProfile(model, get_n(item, "previous_dim")) if model else None
