"""The agentkb CDK app: `cdk synth|deploy` runs `python -m infra.app` (see cdk.json)."""

from __future__ import annotations

import os

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks

from infra import constants as c
from infra.config import DeploymentConfig
from infra.stacks.api_stack import ApiStack
from infra.stacks.data_stack import DataStack


def new_app(context: dict[str, object] | None = None, outdir: str | None = None) -> cdk.App:
    """An App with the feature flags this code is written against (cdk.json / -c still win)."""
    return cdk.App(context={**c.FEATURE_FLAGS, **(context or {})}, outdir=outdir)


def build_app(context: dict[str, object] | None = None, outdir: str | None = None) -> cdk.App:
    """Build (not synthesize) the app: data stack, api stack, cdk-nag AwsSolutions on the whole tree."""
    app = new_app(context, outdir)
    config = DeploymentConfig.from_node(app.node)
    env = cdk.Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION"))
    data = DataStack(app, f"{config.prefix}-data", config=config, env=env,
                     description="agentkb stateful resources (tables, bucket, queue, vector collection)")
    api = ApiStack(app, f"{config.prefix}-api", config=config, data=data, env=env,
                   description="agentkb API (functions, REST API, WAF, alarms)")
    api.add_stack_dependency(data)
    for stack in (data, api):
        cdk.Tags.of(stack).add("service", c.SERVICE)
        cdk.Tags.of(stack).add("stage", config.stage)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return app


def main() -> None:
    build_app().synth()


if __name__ == "__main__":
    main()
