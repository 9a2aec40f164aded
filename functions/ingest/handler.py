"""Lambda entry point of the ingest function: REST v1, HTTP API v2, direct invocation and the SQS ingest queue."""

from agentkb.api.entry_point import lambda_handler_for

# The collector keeps running: this function's first request may be a large upload (README Decisions).
lambda_handler = lambda_handler_for("ingest", keep_collector=True, ingest_queue=True)
