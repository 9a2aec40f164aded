"""A bounded run of bench/fuzz/run.py (schemathesis aimed at a seeded workspace + stateful sequences) against an
instrumented `agentkb serve` on loopback. `make fuzz` runs the same driver with 500 cases per operation.

What it holds: every route of /openapi.json was exercised, at least 80% of the valid generated requests reached
service logic (measured in the server, bench/fuzz/server.py), no request was answered with a 5xx, every response
matched its declared status, content type and schema, and the stateful sequences saw what they wrote, then saw
it gone, and every response of a contract route passed the upstream documents (bench/fuzz/upstream_check.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests.helpers import ROOT
from tests.upstream import KNOWLEDGE_SEARCH, VALIDATED

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(importlib.util.find_spec("schemathesis") is None,
                                                  reason="schemathesis is not installed (dev extra)")]


def test_bounded_fuzz_run_reaches_the_service_and_finds_no_5xx_or_schema_violation() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTKB_")}  # the driver seeds its own data
    run = subprocess.run([sys.executable, "-m", "bench.fuzz.run", "--max-examples", "12", "--seed", "1",
                          "--phases", "examples,fuzzing", "--sequences", "3", "--timeout", "400"],
                         capture_output=True, text=True, timeout=1200, check=False, env=env, cwd=ROOT)
    assert run.stdout.strip(), run.stderr[-3000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["failures"] == [], "\n".join(result["failures"][:10])
    assert result["serverErrors5xx"] == 0, result["statuses"]
    assert result["routesNotCovered"] == []
    assert result["reachedShare"] >= 0.8, result["perRoute"]
    assert result["stateful"]["sequences"] == {"knowledge": 3, "memory": 3}
    for route, counts in result["perRoute"].items():
        # every authenticated route was reached by valid requests, not only refused ("(unknown route)": path
        # parameters that are valid strings but cannot be routed, e.g. containing "/"; they stay in the share)
        if counts["positive"] and route != "(unknown route)":
            assert counts["reached"] > 0, (route, counts)
    assert run.returncode == 0, result
    # Every recorded response of a contract route was held to contracts/ (the vendored upstream documents)
    assert result["upstreamValidated"].get(KNOWLEDGE_SEARCH, 0) > 0, result["upstreamValidated"]
    VALIDATED.update(result["upstreamValidated"])  # validated in the driver's process: counted for this session
