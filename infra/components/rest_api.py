"""The REST API: routes -> functions, 405 for other methods, stage + method throttles, usage plans, error-envelope
gateway responses."""

from __future__ import annotations

import json

from aws_cdk import RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra import constants as c
from infra.components.console import add_console
from infra.components.method_not_allowed import add_method_not_allowed
from infra.config import DeploymentConfig
from infra.nag import acknowledge, checkov_skip

# API Gateway-generated errors, rendered in the project's envelope. $context.error.messageString is quoted JSON.
GATEWAY_RESPONSES = (
    # (ResponseType, status, code, Retry-After)
    (apigw.ResponseType.DEFAULT_4_XX, None, "BAD_REQUEST", False),
    (apigw.ResponseType.DEFAULT_5_XX, None, "INTERNAL_ERROR", False),
    (apigw.ResponseType.THROTTLED, "429", "RATE_LIMITED", True),
    (apigw.ResponseType.QUOTA_EXCEEDED, "429", "RATE_LIMITED", True),
    (apigw.ResponseType.UNAUTHORIZED, "401", "UNAUTHORIZED", False),
    (apigw.ResponseType.INVALID_API_KEY, "401", "UNAUTHORIZED", False),
    (apigw.ResponseType.ACCESS_DENIED, "403", "FORBIDDEN", False),
    (apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, "404", "NOT_FOUND", False),
    (apigw.ResponseType.REQUEST_TOO_LARGE, "413", "PAYLOAD_TOO_LARGE", False),
    (apigw.ResponseType.UNSUPPORTED_MEDIA_TYPE, "415", "UNSUPPORTED_MEDIA_TYPE", False),
    (apigw.ResponseType.INTEGRATION_TIMEOUT, "503", "SERVICE_UNAVAILABLE", True),
)
RETRY_AFTER_SECONDS = "1"

ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "extendedRequestId": "$context.extendedRequestId",
    "ip": "$context.identity.sourceIp",
    "userAgent": "$context.identity.userAgent",
    "requestTime": "$context.requestTime",
    "httpMethod": "$context.httpMethod",
    "resourcePath": "$context.resourcePath",
    "status": "$context.status",
    "protocol": "$context.protocol",
    "responseLength": "$context.responseLength",
    "responseLatency": "$context.responseLatency",
    "integrationLatency": "$context.integrationLatency",
    "apiKeyId": "$context.identity.apiKeyId",
    "wafStatus": "$context.waf.status",
    "errorMessage": "$context.error.message",
    "xrayTraceId": "$context.xrayTraceId",
}


def error_template(code: str) -> str:
    return '{"error":{"code":"' + code + '","message":$context.error.messageString}}'


class ServiceApi(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig,
                 functions: dict[str, lambda_.IFunction]) -> None:
        super().__init__(scope, construct_id)
        self.access_logs = logs.LogGroup(self, "AccessLogs", retention=logs.RetentionDays.ONE_MONTH,
                                         removal_policy=RemovalPolicy.DESTROY)
        self.api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=f"{config.prefix}-api",
            description="agentkb knowledge service",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            api_key_source_type=apigw.ApiKeySourceType.HEADER,
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.DESTROY,
            deploy_options=apigw.StageOptions(
                stage_name=config.stage,
                tracing_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                metrics_enabled=True,
                data_trace_enabled=False,
                throttling_rate_limit=config.throttle_rate,
                throttling_burst_limit=config.throttle_burst,
                method_options={
                    path: apigw.MethodDeploymentOptions(throttling_rate_limit=rate, throttling_burst_limit=burst)
                    for path, (rate, burst) in c.METHOD_THROTTLES.items()
                },
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FORMAT)),
            ),
        )
        self.stage = self.api.deployment_stage
        checkov_skip(self.access_logs, "CKV_AWS_158",
                     "Access logs carry request metadata only (ids, status, latency; no bodies, no keys); CloudWatch "
                     "Logs encrypts them at rest with its service key.")
        checkov_skip(self.stage, "CKV_AWS_120",
                     "Responses depend on the caller's key (workspaces, scopes, personal memories) and mostly on a "
                     "POST body: a stage cache keyed on the path would serve one tenant's answer to another.")
        self.validator = self.api.add_request_validator(
            "Validator", validate_request_body=True, validate_request_parameters=True
        )
        self._routes(config, functions)
        self.console_methods = add_console(self.api, functions[c.CONSOLE_FUNCTION])
        self.method_not_allowed = add_method_not_allowed(self.api)
        self._gateway_responses()
        self._usage_plans(config)
        acknowledge(self.api, "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
                    "AmazonAPIGatewayPushToCloudWatchLogs]",
                    "The account-level API Gateway logging role needs exactly this AWS-maintained policy.")

    def _routes(self, config: DeploymentConfig, functions: dict[str, lambda_.IFunction]) -> None:
        integrations = {name: apigw.LambdaIntegration(fn, proxy=True) for name, fn in functions.items()}
        self.methods: list[tuple[str, str, str, apigw.Method]] = []
        for verb, path, function_name, authenticated in c.ROUTES:
            resource = self.api.root.resource_for_path(path)
            method = resource.add_method(
                verb,
                integrations[function_name],
                # OB1's clients send their key as x-brain-key, which API Gateway's key check cannot read: the
                # function authenticates those routes (the same keys table) whatever apiKeyRequired says.
                api_key_required=authenticated and config.api_key_required and not path.startswith("/ob1/"),
                request_validator=self.validator,
                operation_name=f"{function_name}:{verb} {path}",
            )
            reason = ("Public by design: the health probe and the OpenAPI document." if not authenticated else
                      "The function authenticates X-API-Key against its own keys table (hashed, workspace "
                      "scoped) and answers the project's 401/403 envelope; an API Gateway authorizer would "
                      "duplicate that check on every request.")
            acknowledge(method, "AwsSolutions-APIG4", reason)
            checkov_skip(method, "CKV_AWS_59", reason)
            acknowledge(method, "AwsSolutions-COG4", reason)
            self.methods.append((verb, path, function_name, method))

    def _gateway_responses(self) -> None:
        for response_type, status, code, retry_after in GATEWAY_RESPONSES:
            headers = {"Content-Type": "'application/json'"}
            if retry_after:
                headers["Retry-After"] = f"'{RETRY_AFTER_SECONDS}'"
            self.api.add_gateway_response(
                f"Gateway{code.title().replace('_', '')}{response_type.response_type}",
                type=response_type,
                status_code=status,
                response_headers=headers,
                templates={"application/json": error_template(code)},
            )

    def _usage_plans(self, config: DeploymentConfig) -> None:
        self.usage_plans: dict[str, apigw.UsagePlan] = {}
        for tier in c.USAGE_TIERS:
            self.usage_plans[tier.name] = self.api.add_usage_plan(
                f"UsagePlan{tier.name.title()}",
                name=f"{config.prefix}-{tier.name}",
                description=f"{tier.name} tier: {tier.rate} rps, {tier.quota_per_day} requests/day",
                throttle=apigw.ThrottleSettings(rate_limit=tier.rate, burst_limit=tier.burst),
                quota=apigw.QuotaSettings(limit=tier.quota_per_day, period=apigw.Period.DAY),
                api_stages=[apigw.UsagePlanPerApiStage(api=self.api, stage=self.stage)],
            )
