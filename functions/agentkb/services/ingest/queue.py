"""Ingest at scale: one queued message -> documents chunked, embedded in batches and indexed.

A message is either the AddDocumentRequest JSON plus `knowledgeBaseId`, or an S3 event notification for objects
under `uploads/<workspaceId>/<knowledgeBaseId>/<name>` (HTML, DOCX and PDF extracted, anything else UTF-8 text).
Each message runs once per `message_key` (the Idempotency port): a re-delivery while the first delivery still
runs fails fast (retried later), one after it completed replays the recorded outcome without reading or embedding
anything. Behind that, the ingest service still skips a document whose name, content hash, tags and source URL
are unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from pydantic import ValidationError

from agentkb.errors import BadRequest
from agentkb.models.domain import Document, Principal
from agentkb.models.idempotency import IdempotentCall
from agentkb.models.ingest import AddDocumentRequest
from agentkb.ports.invocation import Idempotency, RemainingTime
from agentkb.services.extract.files import TEXT_SUFFIXES, ExtractedText, Unreadable, extract, supported
from agentkb.services.ingest import service as ingest
from agentkb.services.ingest.background import index_pending
from agentkb.services.ingest.service import IngestDeps
from agentkb.services.snapshot.canonical_json import sha256_hex

UPLOAD_PREFIX = "uploads/"
IDEMPOTENCY_SCOPE = "ingest-queue"
ReadObject = Callable[[str, str], bytes]  # (bucket, key) -> bytes
# The queue is fed by this deployment's own producers (IAM-guarded), so it writes as the service.
QUEUE_PRINCIPAL = Principal(id="ingest-queue", workspaces=("*",), scopes=("api:write",))


class PoisonMessage(BadRequest):
    """A message that can never succeed (malformed, unknown layout): it goes to the DLQ after maxReceiveCount."""


@dataclass(frozen=True, slots=True)
class QueuedDocument:
    knowledge_base_id: str
    request: AddDocumentRequest
    page_starts: tuple[int, ...] = ()  # an extracted PDF upload: where each page begins in the content


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
        found = _upload_text(name, read_object(bucket, key))
        out.append(QueuedDocument(kb_id, _request({"workspaceId": workspace, "name": name, "content": found.text}),
                                  found.page_starts))
    return out


def _upload_text(name: str, data: bytes) -> ExtractedText:
    """HTML (main text), DOCX and PDF uploads are extracted like the CLI's files (a PDF's page offsets kept); any
    other name is UTF-8 text."""
    if supported(name) and not name.lower().endswith(TEXT_SUFFIXES):
        try:
            return extract(name, data)
        except Unreadable as exc:
            raise PoisonMessage(f"Unreadable upload: {exc}") from exc
    try:
        return ExtractedText(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PoisonMessage("Uploads must be UTF-8 text") from exc


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
    pending = _pending(body)
    if pending is not None:  # a document accepted with 202 by the API: its text is in the catalog
        written = index_pending(deps, *pending)
        return [written] if written else []
    return [ingest.add_document(q.knowledge_base_id, q.request, QUEUE_PRINCIPAL, deps, q.page_starts)
            for q in parse_message(body, read_object)]


def _pending(body: str) -> tuple[str, str, str, tuple[int, ...], str | None] | None:
    """(workspace, knowledge base, document, page starts, content hash) of a background-indexing message, else
    None."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    ref = data.get("pendingDocument") if isinstance(data, dict) else None
    if ref is None:
        return None
    fields = [ref.get(k) if isinstance(ref, dict) else None for k in ("workspaceId", "knowledgeBaseId", "documentId")]
    if not all(isinstance(f, str) and f for f in fields):
        raise PoisonMessage("pendingDocument needs workspaceId, knowledgeBaseId and documentId")
    starts = ref.get("pageStarts") if isinstance(ref, dict) else None
    page_starts = tuple(starts) if isinstance(starts, list) and all(type(p) is int for p in starts) else ()
    digest = ref.get("contentHash") if isinstance(ref, dict) else None
    return fields[0], fields[1], fields[2], page_starts, digest if isinstance(digest, str) else None  # type: ignore[return-value]


def _s3_identity(record: Any) -> list[str]:
    """bucket, key and the object version (versionId, else eTag + sequencer: a new upload changes them)."""
    s3 = record.get("s3") if isinstance(record, dict) else None
    s3 = s3 if isinstance(s3, dict) else {}
    bucket, obj = s3.get("bucket") or {}, s3.get("object") or {}
    fields = (bucket.get("name"), obj.get("key"), obj.get("versionId"), obj.get("eTag"), obj.get("sequencer"),
              record.get("eventName") if isinstance(record, dict) else None)
    return [str(f or "") for f in fields]


def message_key(body: str) -> str:
    """What makes two messages the same work: the S3 object versions they announce, or the canonical JSON body."""
    try:
        data = json.loads(body)
        if isinstance(data, dict) and isinstance(data.get("Records"), list):
            return "s3:" + sha256_hex([_s3_identity(r) for r in data["Records"]])
        return "json:" + sha256_hex(data)
    except ValueError:  # not JSON, or not canonicalisable (lone surrogate, unsafe number): the raw bytes
        return "raw:" + hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def ingest_message_once(body: str, deps: IngestDeps, read_object: ReadObject, idempotency: Idempotency,
                        deadline: RemainingTime | None = None) -> tuple[list[str], bool]:
    """(document ids, replayed): the message ingested once per `message_key`, or its recorded outcome.

    Raises OperationInProgress while another delivery of the same message runs; a failure leaves no record.
    """
    def run() -> dict[str, Any]:
        return {"documents": [d.id for d in ingest_message(body, deps, read_object)]}

    result = idempotency.run_once(IdempotentCall(IDEMPOTENCY_SCOPE, message_key(body)), run, deadline)
    return [str(d) for d in result.value.get("documents", [])], result.replayed
