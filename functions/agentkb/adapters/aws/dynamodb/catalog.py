"""Catalog port on DynamoDB: workspaces, knowledge bases (+ tag definitions), the document registry.

Items (catalog table, string pk/sk):
  WS#<ws>   #WORKSPACE        search_mode
  WS#<ws>   KB#<kb>           the knowledge base (profile, tag definitions as JSON)
  WS#<ws>   KBNAME#<name>     kb_id: makes names unique per workspace (conditional put in the same transaction)
  KB#<kb>   #KB               workspace_id, version (bumped by every document write/delete: snapshot cache key)
  KB#<kb>   DOC#<doc>         the document record: written after the index accepted the chunks (the commit point)
  KB#<kb>   DOCNAME#<name>    document_id, revision: the latest revision a write of the name took (claim_revision)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from typing import Any

from agentkb.adapters.aws.dynamodb.documents import DocumentItems, document_from_item, document_item
from agentkb.adapters.aws.dynamodb.tables import get_n, get_s, guarded, key, n, query_all, s
from agentkb.adapters.aws.errors import failed_a_condition, store_failure
from agentkb.errors import RevisionConflict
from agentkb.models.domain import Document, EmbeddingProfile, KnowledgeBase, TagDefinition

STORE = "catalog"
FILTER_VALUES = 100  # DynamoDB's limit on the operands of IN


def _kb(item: dict[str, Any]) -> KnowledgeBase:
    raw = json.loads(get_s(item, "tags") or "[]")
    tags = tuple(TagDefinition(t["tagName"], t["fieldType"], t["slot"]) for t in raw)
    return KnowledgeBase(get_s(item, "kb_id") or "", get_s(item, "workspace_id") or "", get_s(item, "name") or "",
                         get_s(item, "description"), EmbeddingProfile(get_s(item, "model") or "", get_n(item, "dim")),
                         tags, get_s(item, "created_at") or "",
                         "refuse" if get_s(item, "secret_policy") == "refuse" else "flag")


class DynamoDbCatalog(DocumentItems):
    """Catalog port (and the OpenSearch index's document registry) on the catalog table.

    It remembers the embedding profile of every knowledge base it reads (a KB's profile never changes), so the
    OpenSearch index finds a KB's index without reading the KB again when the service has just read it: a search
    reads each KB once, not once more per leg (`remembered_profile`).
    """

    store = STORE

    def __init__(self, client: Callable[[], Any], table: str) -> None:
        super().__init__(client, table)
        self._profiles: dict[tuple[str, str], EmbeddingProfile] = {}

    def remembered_profile(self, workspace_id: str, kb_id: str) -> EmbeddingProfile | None:
        """The profile of a KB this process has read (never a read: None when it has not)."""
        return self._profiles.get((workspace_id, kb_id))

    def _remember(self, kb: KnowledgeBase) -> KnowledgeBase:
        self._profiles[(kb.workspace_id, kb.id)] = kb.profile
        return kb


    # -- workspaces -------------------------------------------------------------------------------------
    def workspace_search_mode(self, workspace_id: str) -> str | None:
        item = self.get_item(f"WS#{workspace_id}", "#WORKSPACE")
        return get_s(item, "search_mode") if item else None

    def set_workspace_search_mode(self, workspace_id: str, mode: str | None) -> None:
        update = "SET search_mode = :m" if mode else "REMOVE search_mode"
        values = {":m": s(mode)} if mode else None
        kwargs: dict[str, Any] = {"TableName": self.table, "Key": key(f"WS#{workspace_id}", "#WORKSPACE"),
                                  "UpdateExpression": update}
        if values:
            kwargs["ExpressionAttributeValues"] = values
        guarded(STORE, lambda: self.client.update_item(**kwargs))

    # -- knowledge bases --------------------------------------------------------------------------------
    def create_knowledge_base(self, kb: KnowledgeBase) -> None:
        ws = f"WS#{kb.workspace_id}"
        tags = json.dumps([{"tagName": t.tag_name, "fieldType": t.field_type, "slot": t.slot}
                           for t in kb.tag_definitions])
        item = {**key(ws, f"KB#{kb.id}"), "kb_id": s(kb.id), "workspace_id": s(kb.workspace_id), "name": s(kb.name),
                "model": s(kb.profile.model), "dim": n(kb.profile.dimension), "tags": s(tags),
                "created_at": s(kb.created_at), "secret_policy": s(kb.secret_policy)}
        if kb.description is not None:
            item["description"] = s(kb.description)
        now = datetime.now(UTC).isoformat()
        items = [
            {"Put": {"TableName": self.table, "Item": {**key(ws, f"KBNAME#{kb.name}"), "kb_id": s(kb.id)},
                     "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"TableName": self.table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"TableName": self.table, "Item": {**key(f"KB#{kb.id}", "#KB"),
                                                       "workspace_id": s(kb.workspace_id), "version": n(0)}}},
            {"Update": {"TableName": self.table, "Key": key(ws, "#WORKSPACE"),
                        "UpdateExpression": "SET created_at = if_not_exists(created_at, :now)",
                        "ExpressionAttributeValues": {":now": s(now)}}},
        ]
        self.transact(items, conflict="A knowledge base with this name already exists in the workspace")

    def get_knowledge_base(self, workspace_id: str, kb_id: str) -> KnowledgeBase | None:
        item = self.get_item(f"WS#{workspace_id}", f"KB#{kb_id}")
        return self._remember(_kb(item)) if item else None

    def find_knowledge_base_by_name(self, workspace_id: str, name: str) -> KnowledgeBase | None:
        pointer = self.get_item(f"WS#{workspace_id}", f"KBNAME#{name}")
        return self.get_knowledge_base(workspace_id, get_s(pointer, "kb_id") or "") if pointer else None

    def list_knowledge_bases(self, workspace_id: str) -> list[KnowledgeBase]:
        items = query_all(self.client, STORE, TableName=self.table,
                          KeyConditionExpression="pk = :pk AND begins_with(sk, :kb)",
                          ExpressionAttributeValues={":pk": s(f"WS#{workspace_id}"), ":kb": s("KB#")})
        return sorted((_kb(i) for i in items), key=lambda kb: (kb.name, kb.id))

    def index_version(self, knowledge_base_id: str) -> int | None:
        item = self.get_item(f"KB#{knowledge_base_id}", "#KB")
        return get_n(item, "version") if item else None

    # -- documents --------------------------------------------------------------------------------------
    def get_document(self, kb_id: str, document_id: str) -> Document | None:
        item = self.get_item(f"KB#{kb_id}", f"DOC#{document_id}")
        return document_from_item(item) if item else None

    def find_document_by_name(self, kb_id: str, name: str) -> Document | None:
        pointer = self.get_item(f"KB#{kb_id}", f"DOCNAME#{name}")
        return self.get_document(kb_id, get_s(pointer, "document_id") or "") if pointer else None

    def find_documents_by_source_path(self, kb_id: str, source_paths: Collection[str]) -> list[Document]:
        """One Query of the KB's records (no index holds source paths), filtered by DynamoDB when few are asked."""
        paths = set(source_paths)
        if not paths:
            return []
        kwargs: dict[str, Any] = {
            "TableName": self.table, "ConsistentRead": True,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :doc)",
            "ExpressionAttributeValues": {":pk": s(f"KB#{kb_id}"), ":doc": s("DOC#")}}
        if len(paths) <= FILTER_VALUES:
            names = {f":p{i}": s(p) for i, p in enumerate(sorted(paths))}
            kwargs["FilterExpression"] = f"source_path IN ({', '.join(names)})"
            kwargs["ExpressionAttributeValues"].update(names)
        found = [document_from_item(i) for i in query_all(self.client, STORE, **kwargs)]
        return sorted((d for d in found if d.source_path in paths), key=lambda d: (d.created_at, d.id))

    def claim_revision(self, document: Document, replaces: int | None) -> None:
        """Take `document.revision` for the name before anything is indexed: RevisionConflict, and nothing
        written, unless the name is at revision `replaces` (0: free; None: any) and held by this document. Two
        writes never take one revision; a revision taken by a write that then failed is skipped."""
        values = {":id": s(document.id), ":rev": n(document.revision)}
        if replaces == 0:
            condition = "attribute_not_exists(pk)"
        elif replaces is None:
            condition = "attribute_not_exists(pk) OR document_id = :id"
        else:  # a name written before revisions were taken here has no revision yet: the record's is checked
            condition = "document_id = :id AND (#rev = :replaces OR attribute_not_exists(#rev))"
            values[":replaces"] = n(replaces)
        try:
            self.client.update_item(
                TableName=self.table, Key=key(f"KB#{document.knowledge_base_id}", f"DOCNAME#{document.name}"),
                UpdateExpression="SET document_id = :id, #rev = :rev", ConditionExpression=condition,
                ExpressionAttributeNames={"#rev": "revision"}, ExpressionAttributeValues=values)
        except Exception as exc:
            if not failed_a_condition(exc):
                raise store_failure(exc, store=STORE) from exc
            raise self._name_revision(document.knowledge_base_id, document.name) from exc

    def _name_revision(self, kb_id: str, name: str) -> RevisionConflict:
        pointer = self.get_item(f"KB#{kb_id}", f"DOCNAME#{name}")
        if pointer is None:
            return RevisionConflict(0, None)
        holder = get_s(pointer, "document_id") or ""
        if "revision" in pointer:
            return RevisionConflict(get_n(pointer, "revision"), holder)
        record = self.get_document(kb_id, holder)
        return RevisionConflict(record.revision if record else 0, holder)

    def put_document(self, document: Document) -> bool:
        """Commit a document record (after its chunks were indexed) and bump the KB's index version. False when
        a higher revision of the document, or its delete, committed first: nothing of this revision stays."""
        pk = f"KB#{document.knowledge_base_id}"
        self.put_text(document)
        try:
            self.client.transact_write_items(TransactItems=[
                {"Put": {"TableName": self.table, "Item": document_item(document),
                         "ConditionExpression": "attribute_not_exists(pk) OR #rev <= :rev",
                         "ExpressionAttributeNames": {"#rev": "revision"},
                         "ExpressionAttributeValues": {":rev": n(document.revision)}}},
                {"ConditionCheck": {"TableName": self.table, "Key": key(pk, f"DOCNAME#{document.name}"),
                                    "ConditionExpression": "document_id = :id",
                                    "ExpressionAttributeValues": {":id": s(document.id)}}},
                self._bump(document.knowledge_base_id)])
        except Exception as exc:
            if not failed_a_condition(exc):
                raise store_failure(exc, store=STORE) from exc
            self.drop_text(document.knowledge_base_id, document.id, lambda revision: revision == document.revision)
            return False
        if document.content is not None:
            self.drop_text(document.knowledge_base_id, document.id, lambda revision: revision < document.revision)
        return True

    def delete_document(self, kb_id: str, document_id: str) -> None:
        current = self.get_document(kb_id, document_id)
        if current is None:
            return
        pk = f"KB#{kb_id}"
        guarded(STORE, lambda: self.client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": self.table, "Key": key(pk, f"DOC#{document_id}")}},
            {"Delete": {"TableName": self.table, "Key": key(pk, f"DOCNAME#{current.name}")}},
            self._bump(kb_id)]))
        self.drop_text(kb_id, document_id, lambda _: True)

    def _bump(self, kb_id: str) -> dict[str, Any]:
        return {"Update": {"TableName": self.table, "Key": key(f"KB#{kb_id}", "#KB"),
                           "UpdateExpression": "ADD version :one", "ExpressionAttributeValues": {":one": n(1)}}}
