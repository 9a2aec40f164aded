"""Lambda entry point of the search function: REST v1, HTTP API v2 and direct invocation."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agentkb.api.functions import search_app
from agentkb.api.observability import capture_handler, logger, metrics

app = search_app()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST, log_event=False)
@capture_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app(event, context)
