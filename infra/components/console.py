"""The web console on the API's own stage: GET /console and /console/{proxy+} -> the search function, which
serves the console's static files from its code asset (agentkb/console/static.py).

Chosen over S3 + CloudFront with origin access control: the console is then the API's own origin, so its CSP
says `connect-src 'self'`, no CORS policy is opened, and the key travels to the host that already receives it;
there is no second distribution, bucket, certificate or WAF to keep hardened, and the files are versioned with
the code that answers them (one deploy). The cost is one small Lambda invocation per file on a page load
(19 files; `Cache-Control: no-cache` revalidates and an unchanged file answers 304 by its ETag).
"""

from __future__ import annotations

from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_

from infra import constants as c
from infra.nag import acknowledge, checkov_skip

REASON = ("Public by design, like /health: static files of the web console (no data, no secret); every API call "
          "the page makes carries the person's own key and is authenticated by the functions.")


def add_console(api: apigw.RestApi, function: lambda_.IFunction) -> list[apigw.Method]:
    integration = apigw.LambdaIntegration(function, proxy=True)
    methods = []
    for path in c.CONSOLE_PATHS:
        method = api.root.resource_for_path(path).add_method(
            "GET", integration, api_key_required=False, operation_name=f"console:GET {path}")
        acknowledge(method, "AwsSolutions-APIG4", REASON)
        acknowledge(method, "AwsSolutions-COG4", REASON)
        checkov_skip(method, "CKV_AWS_59", REASON)
        methods.append(method)
    return methods
