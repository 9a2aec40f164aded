"""Lambda entry point of the recall function: REST v1, HTTP API v2 and direct invocation."""

# ruff: noqa: E402 (the imports below follow pause_collector on purpose)
# isort: off
from agentkb.coldstart_gc import pause_collector, resume_after_first_response

pause_collector()  # before anything else is imported: coldstart_gc.py says why
# isort: on
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentkb.api.functions import recall_app
from agentkb.api.observability import capture_handler, logger, metrics

app = recall_app()


@resume_after_first_response
@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, log_event=False)
@capture_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app(event, context)
