"""Ingest at scale: one queued message -> documents chunked, embedded in batches and indexed.

A message is either the AddDocumentRequest JSON plus `knowledgeBaseId`, or an S3 event notification for objects
under `uploads/<workspaceId>/<knowledgeBaseId>/<name>` (UTF-8 text). Re-delivery is idempotent: the ingest
service skips a document whose name, content hash, tags and source URL are unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from pydantic import ValidationError

from agentkb.errors import BadRequest
from agentkb.models.domain import Document, Principal
from agentkb.models.ingest import AddDocumentRequest
from agentkb.services import ingest
from agentkb.services.ingest import IngestDeps

UPLOAD_PREFIX = "uploads/"
ReadObject = Callable[[str, str], bytes]  # (bucket, key) -> bytes
# The queue is fed by this deployment's own producers (IAM-guarded), so it writes as the service.
QUEUE_PRINCIPAL = Principal(id="ingest-queue", workspaces=("*",), scopes=("api:write",))


class PoisonMessage(BadRequest):
    """A message that can never succeed (malformed, unknown layout): it goes to the DLQ after maxReceiveCount."""


@dataclass(frozen=True, slots=True)
class QueuedDocument:
    knowledge_base_id: str
    request: AddDocumentRequest


def _request(fields: dict[str, Any]) -> AddDocumentRequest:
    try:
        return AddDocumentRequest.model_validate(fields)
    except ValidationError as exc:
        paths = [".".join(map(str, e["loc"])) for e in exc.errors()[:10]]
        raise PoisonMessage("Invalid queued document", details=[{"path": p, "message": "invalid"} for p in paths]) \
            from exc


def upload_location(key: str) -> tuple[str, str, str]:
    """uploads/<workspace>/<kb>/<name...> -> (workspace, kb, name); the name may contain further slashes."""
    parts = key.split("/", 3)
    if len(parts) != 4 or parts[0] + "/" != UPLOAD_PREFIX or not all(parts[1:]):
        raise PoisonMessage("Upload key must be uploads/<workspaceId>/<knowledgeBaseId>/<name>")
    return parts[1], parts[2], parts[3]


def _from_s3(records: list[dict[str, Any]], read_object: ReadObject) -> list[QueuedDocument]:
    out = []
    for record in records:
        if record.get("eventSource") != "aws:s3" or not str(record.get("eventName", "")).startswith("ObjectCreated"):
            continue
        bucket = record["s3"]["bucket"]["name"]
        key = unquote_plus(record["s3"]["object"]["key"])  # S3 notifications URL-encode keys
        workspace, kb_id, name = upload_location(key)
        try:
            content = read_object(bucket, key).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PoisonMessage("Uploads must be UTF-8 text") from exc
        out.append(QueuedDocument(kb_id, _request({"workspaceId": workspace, "name": name, "content": content})))
    return out


def parse_message(body: str, read_object: ReadObject) -> list[QueuedDocument]:
    """The documents a message asks for (an S3 test event asks for none)."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise PoisonMessage("Queued message is not JSON") from exc
    if not isinstance(data, dict):
        raise PoisonMessage("Queued message must be a JSON object")
    if data.get("Event") == "s3:TestEvent":
        return []
    if isinstance(data.get("Records"), list):
        return _from_s3(data["Records"], read_object)
    kb_id = data.pop("knowledgeBaseId", None)
    if not isinstance(kb_id, str) or not kb_id:
        raise PoisonMessage("Queued document needs a knowledgeBaseId")
    return [QueuedDocument(kb_id, _request(data))]


def ingest_message(body: str, deps: IngestDeps, read_object: ReadObject) -> list[Document]:
    """Ingest every document of one message; any failure fails the whole message (it is retried as a unit)."""
    return [ingest.add_document(q.knowledge_base_id, q.request, QUEUE_PRINCIPAL, deps)
            for q in parse_message(body, read_object)]
