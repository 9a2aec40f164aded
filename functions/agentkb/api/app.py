"""One function's API: REST v1 and HTTP v2 resolvers over the same routes, the gate, the three handlers."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from agentkb.api import context
from agentkb.api.gate import check_depth, check_request, rate_headers
from agentkb.api.observability import count_response, logger
from agentkb.api.resolver_state import HttpResolver, RestResolver
from agentkb.api.route import Routes, RouteTable, build_resolver
from agentkb.composition import Ports, get_ports
from agentkb.errors import (
    BadRequest,
    DependencyError,
    DomainError,
    MethodNotAllowed,
    NotFound,
    dependency_failure,
    error_envelope,
)
from agentkb.models.domain import Principal

JSON = "application/json"
# Powertools' resolver logs each route call's arguments (the parsed request body) at DEBUG: request bodies must
# never reach the logs, even with POWERTOOLS_DEBUG or a DEBUG application log level.
logging.getLogger("aws_lambda_powertools.event_handler").setLevel(logging.INFO)


def _json_response(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response[Any]:
    return Response(status_code=status, content_type=JSON, body=json.dumps(body, separators=(",", ":")),
                    headers=headers or {})


_TYPE_TAGS = frozenset({"int", "float", "str", "bool", "list", "dict", "none", "constrained-str", "literal"})


def _issue_path(loc: Sequence[Any]) -> str:
    """A dotted path of field names and indices (pydantic's union-branch tags dropped)."""
    parts = [str(p) for p in loc if isinstance(p, int) or (isinstance(p, str) and p != "body" and p not in _TYPE_TAGS
                                                           and "[" not in p and "-" not in p)]
    return ".".join(parts) or "body"


def validation_details(errors: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """Pydantic issues -> [{path, message}] without echoing the input back."""
    return [{"path": _issue_path(e.get("loc", ())), "message": str(e.get("msg", "invalid"))} for e in errors[:20]]


def dependency_error(exc: DependencyError) -> DomainError:
    """A dependency fault no service degraded around, classified in errors.py; the cause goes to the log only."""
    cause = exc.__cause__
    extra = {"dependency_code": exc.code, "retryable": exc.retryable, "cause": str(exc),
             "cause_type": type(cause).__name__ if cause is not None else None}
    if exc.retryable:
        logger.warning("dependency unavailable", extra=extra)
    else:  # permanent: someone has to fix the deployment or the code, so it is an error with its cause
        logger.error("dependency failed", extra=extra)
    return dependency_failure(exc)


def _install_handlers(app: ApiGatewayResolver) -> None:
    @app.exception_handler(DomainError)
    def _domain(exc: DomainError) -> Response[Any]:
        return _json_response(exc.http_status, exc.envelope(), exc.headers)

    @app.exception_handler(DependencyError)
    def _dependency(exc: DependencyError) -> Response[Any]:
        error = dependency_error(exc)
        return _json_response(error.http_status, error.envelope(), error.headers)

    @app.exception_handler(RequestValidationError)
    def _invalid(exc: RequestValidationError) -> Response[Any]:
        details = validation_details(list(exc.errors()))
        return _json_response(400, error_envelope("BAD_REQUEST", "Invalid request", details))

    @app.exception_handler(Exception)
    def _unexpected(exc: Exception) -> Response[Any]:
        logger.exception("unhandled error")
        return _json_response(500, error_envelope("INTERNAL_ERROR", "Internal server error"))

    @app.not_found
    def _missing(exc: Exception) -> Response[Any]:
        return _json_response(404, NotFound("Route not found").envelope())


def _resolver(cls: type[ApiGatewayResolver], modules: Sequence[Routes],
              overrides: dict[Callable[..., Any], Callable[..., Any]]) -> ApiGatewayResolver:
    app = build_resolver(cls, modules)
    _install_handlers(app)
    app.dependency_overrides = overrides  # one dict for both resolvers of a function
    return app


class FunctionApp:
    """The API of one Lambda function, callable with REST v1, HTTP v2 or direct-invocation events.

    Its resolvers keep each request's state per thread (resolver_state.py), so the threaded local gateway resolves
    requests concurrently: one request's embedding never waits on another's. Lambda sends one at a time anyway.

    Dependencies: routes declare `Depends(get_ports)` (or a provider built on it); `dependency_overrides` is the
    one override table of both resolvers, and the gate and the queue consumer take the bundle from `ports()`.
    """

    def __init__(self, name: str, modules: Sequence[Routes]) -> None:
        self.name = name
        self._modules = tuple(modules)
        self.routes = RouteTable(spec for module in modules for spec in module.specs(name))
        self.dependency_overrides: dict[Callable[..., Any], Callable[..., Any]] = {}
        self.rest = _resolver(RestResolver, modules, self.dependency_overrides)

    @cached_property
    def http(self) -> ApiGatewayResolver:
        """The HTTP API v2 resolver, built on the first v2 event (the stack deploys a REST API; direct invocations
        are REST-shaped)."""
        return _resolver(HttpResolver, self._modules, self.dependency_overrides)

    def ports(self) -> Ports:
        """The bundle this function's requests use: `get_ports()`, or its override."""
        bundle = self.dependency_overrides.get(get_ports, get_ports)()
        if not isinstance(bundle, Ports):
            raise TypeError("a get_ports override must return a Ports bundle")
        return bundle

    def __call__(self, event: dict[str, Any], lambda_context: Any) -> dict[str, Any]:
        remaining = getattr(lambda_context, "get_remaining_time_in_millis", None)
        deadline = self.ports().deadline
        deadline.set_remaining(remaining() if callable(remaining) else None)  # retries end before the invocation
        context.set_invocation(lambda_context)
        try:
            if "operation" in event and "httpMethod" not in event and "requestContext" not in event:
                return self._direct(event, lambda_context)
            return self._http(event, lambda_context, None)
        finally:
            deadline.set_remaining(None)
            context.set_invocation(None)

    def _http(self, event: dict[str, Any], lambda_context: Any, direct: Principal | None) -> dict[str, Any]:
        is_v2 = event.get("version") == "2.0"
        method = event["requestContext"]["http"]["method"] if is_v2 else event.get("httpMethod", "")
        path = event.get("rawPath", "") if is_v2 else event.get("path", "")
        found = self.routes.match(method, path) or _every_route().match(method, path)
        decision = None
        try:
            if found is None:
                allowed = _every_route().allowed_methods(path)
                raise MethodNotAllowed(allowed) if allowed else NotFound("Route not found")
            principal, decision = check_request(event, found[0], self.ports(), direct)
        except DomainError as exc:
            return self._finish(self._error(exc, is_v2), decision, is_v2)
        except DependencyError as exc:  # the key store or rate limiter failed: an answer, not a crashed invocation
            return self._finish(self._error(dependency_error(exc), is_v2), decision, is_v2)
        context.set_principal(principal)
        try:
            result = (self.http if is_v2 else self.rest).resolve(event, lambda_context)
        finally:
            context.set_principal(None)
        return self._finish(result, decision, is_v2)

    @staticmethod
    def _error(exc: DomainError, is_v2: bool) -> dict[str, Any]:
        headers = {"Content-Type": JSON, **exc.headers}
        body = json.dumps(exc.envelope(), separators=(",", ":"))
        if is_v2:
            return {"statusCode": exc.http_status, "headers": headers, "body": body, "isBase64Encoded": False}
        return {"statusCode": exc.http_status, "multiValueHeaders": {k: [v] for k, v in headers.items()},
                "body": body, "isBase64Encoded": False}

    @staticmethod
    def _finish(result: dict[str, Any], decision: Any, is_v2: bool) -> dict[str, Any]:
        count_response(int(result["statusCode"]))
        extra = context.take_response_headers()
        if decision is not None:
            extra.update(rate_headers(decision))
        if extra:
            if is_v2 or "multiValueHeaders" not in result:
                result.setdefault("headers", {}).update(extra)
            else:
                result["multiValueHeaders"].update({k: [v] for k, v in extra.items()})
        return result

    def _direct(self, event: dict[str, Any], lambda_context: Any) -> dict[str, Any]:
        """{"operation", "body", "pathParameters"?, "queryStringParameters"?, "principal"?} -> {statusCode, body}."""
        route = self.routes.by_operation.get(str(event.get("operation")))
        if route is None:
            err = BadRequest("Unknown operation for this function", details=[{"path": "operation",
                                                                              "message": "unknown operation"}])
            return {"statusCode": 400, "body": err.envelope()}
        try:
            check_depth(event.get("body"))
        except BadRequest as err:  # json.dumps of a ~1,000-level body would fail with a RecursionError
            return {"statusCode": 400, "body": err.envelope()}
        principal = _direct_principal(event.get("principal"))
        path = route.path
        for name, value in (event.get("pathParameters") or {}).items():
            path = path.replace("{" + name + "}", str(value))
        body = event.get("body")
        synthetic = {
            "httpMethod": route.method, "path": path, "resource": route.path,
            "headers": {"content-type": JSON}, "multiValueHeaders": {"content-type": [JSON]},
            "queryStringParameters": event.get("queryStringParameters"), "pathParameters": event.get("pathParameters"),
            "body": None if body is None else json.dumps(body), "isBase64Encoded": False,
            "requestContext": {"httpMethod": route.method, "path": path, "resourcePath": route.path,
                               "stage": "direct", "requestId": "direct-invocation"},
        }
        response = self._http(synthetic, lambda_context, principal)
        raw = response.get("body") or ""
        headers = response.get("headers") or {k: v[-1] for k, v in (response.get("multiValueHeaders") or {}).items()}
        return {"statusCode": response["statusCode"], "headers": headers, "body": json.loads(raw) if raw else None}


def _every_route() -> RouteTable:
    """Every function's routes (importing them all) for a request this function does not serve, so that it gets
    the API's answer: authenticated before its 404, or a 405 with Allow on a path another function serves. Behind
    API Gateway no such request reaches a function; the local gateway sends unknown routes to the search function."""
    from agentkb.api.routes_table import TABLE

    return TABLE


def _direct_principal(raw: Any) -> Principal:
    """IAM decided who may invoke; a given principal narrows workspaces and scopes, none means the service."""
    if not isinstance(raw, dict):
        return Principal(id="service", workspaces=("*",), scopes=("api:read", "api:write"))
    return Principal(id=str(raw.get("id") or "service"), workspaces=tuple(map(str, raw.get("workspaces") or ())),
                     scopes=tuple(map(str, raw.get("scopes") or ())))

