"""Lambda entry point of the search function: REST v1, HTTP API v2 and direct invocation; it also serves the
web console's static files under /console (agentkb/console/static.py), the paths no API route declares."""

from agentkb.api.entry_point import lambda_handler_for
from agentkb.console.static import with_console

lambda_handler = with_console(lambda_handler_for("search"))
