"""A bounded schemathesis run (bench/fuzz.py, 25 cases per route) against `agentkb serve` on loopback.

`make fuzz` runs the same driver with 500 cases per route.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(importlib.util.find_spec("schemathesis") is None,
                                                  reason="schemathesis is not installed (dev extra)")]


def test_bounded_fuzz_run_finds_no_5xx_and_no_schema_violation() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKB_")}  # the driver seeds its own data
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "fuzz.py"), "--max-examples", "25", "--seed", "1",
                          "--timeout", "240"], capture_output=True, text=True, timeout=300, check=False, env=env)
    assert run.stdout.strip(), run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["failures"] == [], "\n".join(result["failures"][:10])
    assert run.returncode == 0, result
    served = result["requestsPerRoute"]
    assert all(served.get(k, 0) >= 20 for k in served if k.startswith("POST") and "/bases" not in k), served
