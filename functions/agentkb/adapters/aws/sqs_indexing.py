"""The AWS background-indexing queue: the record (with its text) in the catalog, a reference on the ingest queue.

The message carries ids only (SQS holds 256 KB; a document may be 1.5 M characters): the ingest function's
queue consumer reads the text back from the catalog (services/background_ingest.index_pending).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from agentkb.adapters.aws.dynamodb.catalog import DynamoDbCatalog
from agentkb.adapters.aws.dynamodb.tables import guarded
from agentkb.models.domain import Document


def pending_message(document: Document, page_starts: tuple[int, ...] = ()) -> str:
    ref: dict[str, Any] = {"workspaceId": document.workspace_id, "knowledgeBaseId": document.knowledge_base_id,
                           "documentId": document.id,
                           # a later write of other text is new work, not a duplicate message
                           "contentHash": document.content_hash}
    if page_starts:  # a PDF upload's page offsets (a few KB for hundreds of pages; SQS holds 256 KB)
        ref["pageStarts"] = list(page_starts)
    return json.dumps({"pendingDocument": ref})


class SqsIndexingQueue:
    def __init__(self, catalog: DynamoDbCatalog, sqs: Callable[[], Any], queue_url: str) -> None:
        self.catalog = catalog
        self._sqs = sqs
        self.queue_url = queue_url

    def enqueue(self, document: Document, replaces: int | None = None, page_starts: tuple[int, ...] = ()) -> None:
        # Record first: a message whose record is missing would find nothing to index; a record whose message
        # failed to send answers 503 to the client, who retries the same write. A record a later revision
        # replaced before it committed needs no message.
        self.catalog.claim_revision(document, replaces)
        if not self.catalog.put_document(document):
            return
        guarded("ingest-queue", lambda: self._sqs().send_message(QueueUrl=self.queue_url,
                                                                 MessageBody=pending_message(document, page_starts)))

    def done(self, document: Document, error: str | None = None) -> None:
        if error is not None:
            self.catalog.mark_failed(document.knowledge_base_id, document.id, document.revision, error)
