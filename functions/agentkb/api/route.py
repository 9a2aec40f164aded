"""One declaration per route: `@routes.read(method, path, operationId, summary=..., responses=...)` (or `write`,
`public`) above the route function, and nothing else to write.

The declaration registers the function with Powertools and records a `RouteSpec`; the function that serves it
is the one whose app includes the module's `Routes` (api/routers.py). Every other consumer reads the specs: the
gate (scope, OB1 key carriers), direct invocation (operationId), the local gateway, the OpenAPI document, API
Gateway (infra/constants.py) and the MCP tools (mcp/tools.py).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, partialmethod
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Router

READ, WRITE, ADMIN = "api:read", "api:write", "api:admin"
F = TypeVar("F", bound=Callable[..., Any])
_PARAMETER = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class RouteSpec:
    """A served route: `path` as the public interface writes it (`/v1/memories/{memoryId}`); `scope` None = public."""

    operation_id: str
    method: str
    path: str
    function: str
    scope: str | None

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile("^" + _PARAMETER.sub(r"(?P<\1>[^/]+)", self.path) + "$")


@dataclass(frozen=True)
class _Declared:
    method: str
    path: str
    operation_id: str
    scope: str | None


class Routes:
    """The routes of one module: a Powertools `Router` (`router`) and what each route was declared with.

    `@routes.read(method, path, operationId, summary=..., responses=...)` declares a route that needs the
    `api:read` scope; `write` needs `api:write`, `admin` needs `api:admin`, `public` no key at all.
    """

    def __init__(self) -> None:
        self.router = Router()
        self._declared: list[_Declared] = []

    def route(self, method: str, path: str, operation_id: str, *, scope: str | None, summary: str,
              responses: dict[int, Any] | None = None) -> Callable[[F], F]:
        """Declare a route and register the decorated function for it (path parameters as `{name}`)."""
        self._declared.append(_Declared(method, path, operation_id, scope))
        return self.router.route(_PARAMETER.sub(r"<\1>", path), method, summary=summary, responses=responses,
                                 operation_id=operation_id)

    read = partialmethod(route, scope=READ)
    write = partialmethod(route, scope=WRITE)
    admin = partialmethod(route, scope=ADMIN)  # operator routes (forget a principal)
    public = partialmethod(route, scope=None)

    def specs(self, function: str) -> list[RouteSpec]:
        """The declared routes, as served by `function`."""
        return [RouteSpec(d.operation_id, d.method, d.path, function, d.scope) for d in self._declared]


def build_resolver(cls: type[ApiGatewayResolver], modules: Sequence[Routes]) -> ApiGatewayResolver:
    """A resolver over its own copies of the modules' routers: including a router points the router's request
    state (current event, Lambda context) at the including resolver, so two resolvers must never share one."""
    app = cls(enable_validation=True)
    for module in modules:
        app.include_router(copy.copy(module.router))
    return app


class RouteTable:
    """Routes found by method and path, or by operationId; a route is declared once (both keys unique)."""

    def __init__(self, routes: Iterable[RouteSpec]) -> None:
        self.routes = tuple(routes)
        self.by_operation = {route.operation_id: route for route in self.routes}
        if len(self.by_operation) != len(self.routes) or len({(r.method, r.path) for r in self.routes}) != len(
                self.routes):
            raise ValueError("two routes share an operationId or a method and path")

    def match(self, method: str, path: str) -> tuple[RouteSpec, dict[str, str]] | None:
        """The route for a request, with its path parameters; None when no route has that method and path."""
        for route in self.routes:
            if route.method == method.upper():
                found = route.pattern.match(path)
                if found:
                    return route, found.groupdict()
        return None

    def allowed_methods(self, path: str) -> list[str]:
        """The methods some route serves at `path` (empty for an unknown path): a 405's `Allow` header."""
        return sorted({route.method for route in self.routes if route.pattern.match(path)})
