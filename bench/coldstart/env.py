"""The environment a deployed function starts with: the stack's own variables plus what Lambda's runtime sets.

The AGENTKB_* and POWERTOOLS_* variables come from `infra.environment.function_environment` itself (the CDK
code the stack deploys), called with stand-ins for the data stack's resources and default context, so a variable
added to the stack is measured here too. The Lambda runtime adds its own: the function's name and memory, the
task root (with `Tracing.ACTIVE`, Powertools' Tracer turns on when it sees it), the X-Ray trace header of the
invocation and the X-Ray daemon address (a loopback UDP port here), JSON log format and the role's credentials.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

REGION = "eu-west-1"
ACCOUNT = "123456789012"
ENDPOINT = "https://coldstart0000000000.eu-west-1.aoss.amazonaws.com"
_TOKEN = re.compile(r"\$\{Token\[AWS\.(\w+)\.\d+\]\}")
_TOKEN_VALUES = {"Partition": "aws", "Region": REGION, "AccountId": ACCOUNT, "URLSuffix": "amazonaws.com"}


def table_name(name: str) -> str:
    return f"agentkb-prod-{name.replace('_', '-')}"


def stack_environment(secret_arn: str, bucket: str, queue_url: str) -> dict[str, str]:
    """The variables `infra/components/functions.py` gives every function, with concrete resource names."""
    from infra import constants as c
    from infra.config import DeploymentConfig
    from infra.environment import function_environment

    config = DeploymentConfig.from_node(SimpleNamespace(try_get_context=lambda key: None))  # type: ignore[arg-type]
    data = SimpleNamespace(
        tables=SimpleNamespace(by_name={n: SimpleNamespace(table_name=table_name(n)) for n in c.TABLES}),
        vectors=SimpleNamespace(endpoint=ENDPOINT),
        documents=SimpleNamespace(bucket=SimpleNamespace(bucket_name=bucket)),
        pepper=SimpleNamespace(secret=SimpleNamespace(secret_arn=secret_arn)),
        ingest=SimpleNamespace(queue=SimpleNamespace(queue_url=queue_url)),
        identity=None,  # no Cognito issuer (cognito=true is off by default)
    )
    env = function_environment(config, data)  # type: ignore[arg-type]
    return {k: _TOKEN.sub(lambda m: _TOKEN_VALUES[m.group(1)], v) for k, v in env.items()}


def lambda_runtime_environment(function: str, *, tracing: bool = True) -> dict[str, str]:
    """What the Lambda runtime sets for an invocation of `function` (Tracing.ACTIVE, JSON logs, INFO level)."""
    from infra import constants as c

    memory = next(spec.memory_mb for spec in c.FUNCTIONS if spec.name == function)
    env = {
        "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "AWS_EXECUTION_ENV": "AWS_Lambda_python3.11",
        "AWS_LAMBDA_FUNCTION_NAME": f"agentkb-{function}", "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory), "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
        "AWS_LAMBDA_LOG_FORMAT": "JSON", "AWS_LAMBDA_LOG_LEVEL": "INFO",
        "LAMBDA_TASK_ROOT": "/var/task", "LAMBDA_RUNTIME_DIR": "/var/runtime",
        "_HANDLER": f"{function}.handler.lambda_handler",
        "AWS_ACCESS_KEY_ID": "ASIACOLDSTART0000000", "AWS_SECRET_ACCESS_KEY": "coldstart" * 4,
        "AWS_SESSION_TOKEN": "coldstart-session-token",
    }
    if tracing:
        env.update({"_X_AMZN_TRACE_ID": "Root=1-67a0b1c2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1",
                    "AWS_XRAY_CONTEXT_MISSING": "LOG_ERROR", "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000"})
    return env
