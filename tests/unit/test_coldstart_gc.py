"""A Lambda cold start runs without the cyclic collector until its first response (agentkb/coldstart_gc.py); a
handler imported anywhere else keeps it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.environment import aws_environment

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, importlib
module = importlib.import_module("{name}.handler")
after_import = gc.isenabled()
class Context:
    function_name, function_version, memory_limit_in_mb = "agentkb-{name}", "$LATEST", 1024
    invoked_function_arn = "arn:aws:lambda:eu-west-1:123456789012:function:agentkb-{name}"
    aws_request_id = "probe"
    def get_remaining_time_in_millis(self): return 30000
answer = module.lambda_handler({{"operation": "noSuchOperation", "body": {{}}}}, Context())  # 400, no I/O
print(json.dumps({{"after_import": after_import, "after_first": gc.isenabled(), "frozen": gc.get_freeze_count(),
                  "status": answer["statusCode"]}}))
"""
FUNCTIONS = ("recall", "search", "snapshot")


def probe(name: str, extra: dict[str, str]) -> dict[str, object]:
    env = {k: v for k, v in aws_environment().items() if k != "AWS_LAMBDA_FUNCTION_NAME"} | extra
    done = subprocess.run([sys.executable, "-c", PROBE.format(name=name)],
                          cwd=ROOT / "functions", env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_in_lambda_the_collector_waits_for_the_first_response(name: str) -> None:
    result = probe(name, {"AWS_LAMBDA_FUNCTION_NAME": f"agentkb-{name}"})
    # The import ran without the collector; the first answer (a 400 here) resumed it, with the cold
    # start's objects frozen out of its reach
    assert result["after_import"] is False and result["after_first"] is True
    assert isinstance(result["frozen"], int) and result["frozen"] > 0 and result["status"] == 400


def test_outside_lambda_a_handler_import_keeps_the_collector() -> None:
    result = probe("recall", {})
    assert result == {"after_import": True, "after_first": True, "frozen": 0, "status": 400}
