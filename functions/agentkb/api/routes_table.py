"""Every public route, collected from the declarations (api/route.py) of every function's route modules.

Importing it imports them all: the local gateway, API Gateway (infra/constants.py), the MCP tools and the tests
read it. A function's app reads its own routes and reaches for this table only for a request it does not serve.
"""

from __future__ import annotations

from agentkb.api.route import RouteSpec, RouteTable
from agentkb.api.routers import FUNCTION_ROUTES

__all__ = ["BY_OPERATION", "ROUTES", "TABLE", "RouteSpec", "allowed_methods", "match_route"]
TABLE = RouteTable(spec for function, routes in FUNCTION_ROUTES.items() for module in routes()
                   for spec in module.specs(function))
ROUTES: tuple[RouteSpec, ...] = TABLE.routes
BY_OPERATION = TABLE.by_operation
match_route = TABLE.match
allowed_methods = TABLE.allowed_methods
