"""Lambda entry point of the search function: REST v1, HTTP API v2 and direct invocation."""

from agentkb.api.entry_point import lambda_handler_for

lambda_handler = lambda_handler_for("search")
