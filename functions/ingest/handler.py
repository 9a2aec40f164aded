"""Lambda entry point of the ingest function: REST v1, HTTP API v2, direct invocation and the SQS ingest queue."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentkb.api.functions import ingest_app
from agentkb.api.ingest_queue import handle_sqs, is_sqs_event
from agentkb.api.observability import capture_handler, logger, metrics

app = ingest_app()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, log_event=False)
@capture_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if is_sqs_event(event):
        return handle_sqs(event, context, app.ports())
    return app(event, context)
