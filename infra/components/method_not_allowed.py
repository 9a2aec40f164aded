"""405 + Allow at API Gateway for a routed path asked with a method none of its routes declares.

API Gateway answers such a request itself (MISSING_AUTHENTICATION_TOKEN, our 404 gateway response) and the
functions, which answer 405 for it (api/app.py), never see it. An ANY method on each routed path, backed by a mock
integration, gives the answer the functions give: API Gateway prefers a path's own methods over ANY, so only the
undeclared methods reach it, and no function is invoked.
"""

from __future__ import annotations

import json

from aws_cdk import aws_apigateway as apigw

from agentkb.errors import MethodNotAllowed
from infra import constants as c
from infra.nag import acknowledge, checkov_skip

JSON = "application/json"
REASON = ("A mock integration answering 405 for methods the path does not serve: it reaches no function and "
          "returns no data, so there is nothing to authenticate.")


def allowed_by_path() -> dict[str, list[str]]:
    out: dict[str, set[str]] = {}
    for verb, path, _, _ in c.ROUTES:
        out.setdefault(path, set()).add(verb)
    return {path: sorted(verbs) for path, verbs in out.items()}


def add_method_not_allowed(api: apigw.RestApi) -> list[apigw.Method]:
    """One ANY method per routed path answering the functions' 405 body and Allow header."""
    methods = []
    for path, allowed in allowed_by_path().items():
        error = MethodNotAllowed(allowed)
        headers = {"Allow": error.headers["Allow"], "Content-Type": JSON}
        integration = apigw.MockIntegration(
            # The template ignores the body; other media types are refused (415) rather than passed to the mock.
            request_templates={JSON: json.dumps({"statusCode": error.http_status})},
            passthrough_behavior=apigw.PassthroughBehavior.NEVER,
            integration_responses=[apigw.IntegrationResponse(
                status_code=str(error.http_status),
                response_templates={JSON: json.dumps(error.envelope(), separators=(",", ":"))},
                response_parameters={f"method.response.header.{k}": f"'{v}'" for k, v in headers.items()})])
        method = api.root.resource_for_path(path).add_method(
            "ANY", integration, api_key_required=False, operation_name=f"methodNotAllowed {path}",
            method_responses=[apigw.MethodResponse(
                status_code=str(error.http_status),
                response_parameters={f"method.response.header.{k}": True for k in headers})])
        acknowledge(method, "AwsSolutions-APIG4", REASON)
        acknowledge(method, "AwsSolutions-COG4", REASON)
        checkov_skip(method, "CKV_AWS_59", REASON)
        methods.append(method)
    return methods
