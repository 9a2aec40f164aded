"""The ingest function's queue consumer: SQS batches with Powertools partial-failure reporting.

Each record is processed on its own; a failing record (poison or transient) is reported in batchItemFailures, so
SQS retries only it and moves it to the DLQ after maxReceiveCount, while the rest of the batch is deleted. Each
record runs once per message key (Powertools idempotency): a duplicate of a record still in progress elsewhere is
reported as a failure (OperationInProgress) and retried after the visibility timeout.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from agentkb.api.observability import logger
from agentkb.api.routes.ingest import ingest_deps
from agentkb.composition import Ports
from agentkb.errors import DomainError
from agentkb.services.ingest.queue import PoisonMessage, ingest_message_once


def is_sqs_event(event: dict[str, Any]) -> bool:
    records = event.get("Records")
    return isinstance(records, list) and bool(records) and records[0].get("eventSource") == "aws:sqs"


def _record_handler(record: Any, lambda_context: Any, ports: Ports) -> None:
    try:
        documents, replayed = ingest_message_once(record.body, ingest_deps(ports), ports.objects.read_object,
                                                  ports.idempotency, lambda_context)
    except DomainError as exc:
        # 4xx-class failures never succeed on retry; log without the body (it may hold document text)
        level = logger.error if isinstance(exc, PoisonMessage) or exc.http_status < 500 else logger.warning
        level("queued ingest failed", extra={"message_id": record.message_id, "code": exc.code,
                                             "reason": exc.message})
        raise
    logger.info("queued ingest done", extra={"message_id": record.message_id, "documents": documents,
                                             "replayed": replayed})


def handle_sqs(event: dict[str, Any], context: Any, ports: Ports) -> dict[str, Any]:
    """Process an SQS batch on the ingest function's ports; returns {"batchItemFailures": [...]}."""
    from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

    remaining = getattr(context, "get_remaining_time_in_millis", None)
    ports.deadline.set_remaining(remaining() if callable(remaining) else None)
    processor = BatchProcessor(event_type=EventType.SQS)
    try:
        response = process_partial_response(event=event, processor=processor, context=context,
                                            record_handler=partial(_record_handler, ports=ports))
    finally:
        ports.deadline.set_remaining(None)
    return dict(response)
