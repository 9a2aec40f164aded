"""X-Ray tracing in Lambda: the Tracer patches only the libraries the functions do I/O with (cold start cost)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json
from agentkb.api.observability import capture_handler
from aws_xray_sdk.core import patcher
class Context:
    function_name, function_version, memory_limit_in_mb = "agentkb-search", "$LATEST", 1024
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:agentkb-search"
    aws_request_id = "probe"
handler = capture_handler(lambda event, context: {"statusCode": 200})
print(json.dumps({"patched": sorted(patcher._PATCHED_MODULES), "answer": handler({}, Context())}))
"""


def run_probe(extra: dict[str, str]) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("POWERTOOLS_TRACE", "AWS_XRAY", "_X_AMZN"))}
    env.update({"PYTHONPATH": str(ROOT / "functions"), "AWS_REGION": "eu-west-1", **extra})
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_lambda_tracing_patches_botocore_and_http_client_only() -> None:
    # Given the environment Lambda gives a function with Tracing.ACTIVE (the daemon address is a loopback port)
    result = run_probe({"LAMBDA_TASK_ROOT": "/var/task", "AWS_LAMBDA_FUNCTION_NAME": "agentkb-search",
                        "_X_AMZN_TRACE_ID": "Root=1-67a0b1c2-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;"
                                            "Sampled=1", "AWS_XRAY_DAEMON_ADDRESS": "127.0.0.1:2000"})
    # Then boto3's and the OpenSearch transport's calls are traced, nothing else is patched, the handler answers
    assert result == {"patched": ["botocore", "httplib"], "answer": {"statusCode": 200}}


def test_no_tracer_outside_lambda() -> None:
    result = run_probe({})
    assert result == {"patched": [], "answer": {"statusCode": 200}}
