"""The document side of the DynamoDB catalog: records, their text, paging, and removing a knowledge base.

Items (catalog table):
  KB#<kb>   DOC#<doc>                   the document record (status, source path, text revision and part count)
  KB#<kb>   DOCNAME#<name>              document_id
  KB#<kb>   DOCTEXT#<doc>#<rev>#<part>  the text in parts of TEXT_PART_CHARS (an item holds at most 400 KB)

A write puts the text parts of its revision first and commits the record last, so a reader never follows a
record to missing text; the parts of earlier revisions are removed after the commit (never a later revision's,
which a concurrent write of the name may be putting).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agentkb.adapters.aws.dynamodb.tables import DynamoDbTable, get_n, get_s, guarded, key, n, s
from agentkb.models.domain import Document, KnowledgeBase
from agentkb.paging import decode_cursor, encode_cursor, invalid_cursor, is_string_pair

STORE = "catalog"
TEXT_PART_CHARS = 90_000  # <= 360 KB of UTF-8 even at 4 bytes a character


def document_from_item(item: dict[str, Any]) -> Document:
    status = get_s(item, "status") or "ready"
    return Document(get_s(item, "document_id") or "", get_s(item, "kb_id") or "", get_s(item, "workspace_id") or "",
                    get_s(item, "name") or "", get_s(item, "source_url"), get_s(item, "content_hash") or "",
                    json.loads(get_s(item, "tags") or "{}"), get_n(item, "chunk_count"), get_n(item, "token_count"),
                    get_s(item, "created_at") or "", get_n(item, "revision", 1), get_s(item, "source_path"),
                    status if status in ("indexing", "ready", "failed") else "ready",  # type: ignore[arg-type]
                    get_s(item, "error"), secret_chunks=_indexes(get_s(item, "secret_chunks")))


def _indexes(stored: str | None) -> tuple[int, ...] | None:
    """Chunk indexes with a detected secret (a JSON list); None for a record written before chunks were scanned."""
    return tuple(json.loads(stored)) if stored is not None else None


def document_item(document: Document) -> dict[str, Any]:
    item = {**key(f"KB#{document.knowledge_base_id}", f"DOC#{document.id}"), "document_id": s(document.id),
            "kb_id": s(document.knowledge_base_id), "workspace_id": s(document.workspace_id),
            "name": s(document.name), "content_hash": s(document.content_hash), "tags": s(json.dumps(document.tags)),
            "chunk_count": n(document.chunk_count), "token_count": n(document.token_count),
            "created_at": s(document.created_at), "revision": n(document.revision), "status": s(document.status)}
    for name, value in (("source_url", document.source_url), ("source_path", document.source_path),
                        ("error", document.error)):
        if value is not None:
            item[name] = s(value)
    if document.secret_chunks is not None:
        item["secret_chunks"] = s(json.dumps(list(document.secret_chunks)))
    if document.content is not None:
        item["text_parts"] = n(len(_parts(document.content)))
    return item


def _parts(text: str) -> list[str]:
    return [text[i:i + TEXT_PART_CHARS] for i in range(0, len(text), TEXT_PART_CHARS)] or [""]


class DocumentItems(DynamoDbTable):
    """Document text, paging and knowledge-base removal for DynamoDbCatalog."""

    store = STORE

    def put_text(self, document: Document) -> None:
        """The text parts of this revision (before the record that points at them is committed)."""
        if document.content is None:
            return
        prefix = f"DOCTEXT#{document.id}#{document.revision}#"
        self.batch_write([
            {"PutRequest": {"Item": {**key(f"KB#{document.knowledge_base_id}", f"{prefix}{i:05d}"), "text": s(part)}}}
            for i, part in enumerate(_parts(document.content))])

    def drop_text(self, kb_id: str, document_id: str, stale: Callable[[int], bool]) -> None:
        """The text parts of the document's revisions that are `stale` (a later write may be putting its own)."""
        prefix = f"DOCTEXT#{document_id}#"
        parts = [i["sk"]["S"] for i in self._query(kb_id, prefix, "sk")]
        self.batch_write([
            {"DeleteRequest": {"Key": key(f"KB#{kb_id}", sk)}} for sk in parts
            if stale(int(sk.removeprefix(prefix).split("#")[0]))])

    def mark_failed(self, kb_id: str, document_id: str, revision: int, error: str) -> None:
        """A queued revision that could not be indexed: `failed` with the reason (only while it is the record's
        revision and still `indexing`)."""
        # a failed condition: already indexed by a later write, or deleted: nothing to mark
        self.conditional(lambda: self.client.update_item(
            TableName=self.table, Key=key(f"KB#{kb_id}", f"DOC#{document_id}"),
            UpdateExpression="SET #st = :failed, #er = :error",
            ConditionExpression="#st = :indexing AND #rev = :rev",
            ExpressionAttributeNames={"#st": "status", "#er": "error", "#rev": "revision"},
            ExpressionAttributeValues={":failed": s("failed"), ":error": s(error[:1000]),
                                       ":indexing": s("indexing"), ":rev": n(revision)}))

    def document_content(self, kb_id: str, document_id: str) -> str | None:
        record = self.get_item(f"KB#{kb_id}", f"DOC#{document_id}")
        return None if record is None else self._texts(kb_id, [record]).get(document_id)

    def document_contents(self, kb_id: str, document_ids: Sequence[str]) -> dict[str, str]:
        records = self.batch_get([key(f"KB#{kb_id}", f"DOC#{d}") for d in dict.fromkeys(document_ids)],
                                 consistent=True)
        return self._texts(kb_id, records)

    def _texts(self, kb_id: str, records: Sequence[dict[str, Any]]) -> dict[str, str]:
        """The text of each document record that has one, every part read in one batch (pages of 100 keys)."""
        keys = {get_s(r, "document_id") or "": [
            key(f"KB#{kb_id}", f"DOCTEXT#{get_s(r, 'document_id')}#{get_n(r, 'revision', 1)}#{i:05d}")
            for i in range(get_n(r, "text_parts"))] for r in records if "text_parts" in r}
        parts = {i["sk"]["S"]: get_s(i, "text") or "" for i in self.batch_get(
            [k for part_keys in keys.values() for k in part_keys], consistent=True)}
        return {doc: "".join(parts.get(k["sk"]["S"], "") for k in part_keys) for doc, part_keys in keys.items()}

    def list_documents(self, kb_id: str, limit: int, cursor: str | None = None) -> tuple[list[Document], str | None]:
        """A page of the KB's documents in name order, as the embedded catalog pages them: the DOCNAME# pointers
        sort by name (unique per KB), their records are read consistently; the cursor holds the last name shown."""
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :name)",
            "ExpressionAttributeValues": {":pk": s(f"KB#{kb_id}"), ":name": s("DOCNAME#")}, "Limit": limit + 1,
            "ConsistentRead": True}
        if cursor:
            after = decode_cursor(cursor, is_string_pair)
            if after[0] != kb_id:
                raise invalid_cursor()  # another KB's cursor: the same 400 as a forged one
            kwargs["ExclusiveStartKey"] = key(f"KB#{kb_id}", f"DOCNAME#{after[1]}")
        page = self.query_page(**kwargs)
        items = page.get("Items", [])
        pointers = items[:limit]
        ids = [get_s(p, "document_id") or "" for p in pointers]
        records = {get_s(i, "document_id"): i for i in self.batch_get(
            [key(f"KB#{kb_id}", f"DOC#{d}") for d in ids], consistent=True)}
        docs = [document_from_item(records[d]) for d in ids if d in records]
        more = len(items) > limit or "LastEvaluatedKey" in page
        last = pointers[-1]["sk"]["S"].removeprefix("DOCNAME#") if pointers else ""
        return docs, encode_cursor([kb_id, last]) if more and pointers else None

    def delete_knowledge_base(self, kb: KnowledgeBase) -> None:
        """Documents, names and text first, the KB record last: a crash midway leaves a KB a retry can finish."""
        children = [i["sk"]["S"] for i in self._query(kb.id, "", "sk")]
        self.batch_write([{"DeleteRequest": {"Key": key(f"KB#{kb.id}", sk)}} for sk in children if sk != "#KB"])
        ws = f"WS#{kb.workspace_id}"
        guarded(STORE, lambda: self.client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": self.table, "Key": key(ws, f"KB#{kb.id}")}},
            {"Delete": {"TableName": self.table, "Key": key(ws, f"KBNAME#{kb.name}")}},
            {"Delete": {"TableName": self.table, "Key": key(f"KB#{kb.id}", "#KB")}}]))

    def _query(self, kb_id: str, prefix: str, projection: str) -> list[dict[str, Any]]:
        values = {":pk": s(f"KB#{kb_id}"), **({":p": s(prefix)} if prefix else {})}
        condition = "pk = :pk AND begins_with(sk, :p)" if prefix else "pk = :pk"
        return list(self.query(ProjectionExpression=projection, KeyConditionExpression=condition,
                               ExpressionAttributeValues=values))
