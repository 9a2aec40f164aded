"""Regional WAFv2 web ACL on the API stage: rate limits per client IP and per x-api-key header."""

from __future__ import annotations

import json

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from infra import constants as c
from infra.config import DeploymentConfig

RATE_LIMITED_BODY_KEY = "rateLimited"
RATE_LIMITED_BODY = json.dumps(
    {"error": {"code": "RATE_LIMITED", "message": "Too many requests; retry after the Retry-After delay."}}
)


def _block_with_429() -> wafv2.CfnWebACL.RuleActionProperty:
    return wafv2.CfnWebACL.RuleActionProperty(
        block=wafv2.CfnWebACL.BlockActionProperty(
            custom_response=wafv2.CfnWebACL.CustomResponseProperty(
                response_code=429,
                custom_response_body_key=RATE_LIMITED_BODY_KEY,
                response_headers=[wafv2.CfnWebACL.CustomHTTPHeaderProperty(
                    name="Retry-After", value=str(c.WAF_RETRY_AFTER_S))],
            )
        )
    )


def _visibility(name: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=name, sampled_requests_enabled=True
    )


class ApiFirewall(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: DeploymentConfig, stage: apigw.Stage) -> None:
        super().__init__(scope, construct_id)
        per_ip = wafv2.CfnWebACL.RuleProperty(
            name="rate-per-ip",
            priority=10,
            action=_block_with_429(),
            statement=wafv2.CfnWebACL.StatementProperty(
                rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                    limit=c.WAF_LIMIT_PER_IP, aggregate_key_type="IP", evaluation_window_sec=c.WAF_WINDOW_S,
                )
            ),
            visibility_config=_visibility(f"{config.prefix}-rate-per-ip"),
        )
        per_key = wafv2.CfnWebACL.RuleProperty(
            name="rate-per-api-key",
            priority=20,
            action=_block_with_429(),
            statement=wafv2.CfnWebACL.StatementProperty(
                rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                    limit=c.WAF_LIMIT_PER_API_KEY,
                    aggregate_key_type="CUSTOM_KEYS",
                    evaluation_window_sec=c.WAF_WINDOW_S,
                    custom_keys=[wafv2.CfnWebACL.RateBasedStatementCustomKeyProperty(
                        header=wafv2.CfnWebACL.RateLimitHeaderProperty(
                            name=c.API_KEY_HEADER,
                            text_transformations=[wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")],
                        )
                    )],
                )
            ),
            visibility_config=_visibility(f"{config.prefix}-rate-per-api-key"),
        )
        bad_inputs = wafv2.CfnWebACL.RuleProperty(
            name="aws-known-bad-inputs",
            priority=30,
            override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
            statement=wafv2.CfnWebACL.StatementProperty(
                managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                    vendor_name="AWS", name="AWSManagedRulesKnownBadInputsRuleSet"
                )
            ),
            visibility_config=_visibility(f"{config.prefix}-known-bad-inputs"),
        )
        self.web_acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            name=f"{config.prefix}-api",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            custom_response_bodies={
                RATE_LIMITED_BODY_KEY: wafv2.CfnWebACL.CustomResponseBodyProperty(
                    content_type="APPLICATION_JSON", content=RATE_LIMITED_BODY
                )
            },
            rules=[per_ip, per_key, bad_inputs],
            visibility_config=_visibility(f"{config.prefix}-api-acl"),
        )
        self.association = wafv2.CfnWebACLAssociation(
            self, "Association", resource_arn=stage.stage_arn, web_acl_arn=self.web_acl.attr_arn
        )
        self.association.node.add_dependency(stage)
