"""OB1's own smoke harness (live-smoke.mjs, run by node) against the local gateway over the AWS adapters (moto + the
fake OpenSearch + the fake Bedrock): bench/ob1/smoke_aws.py. The harness is OB1's (FSL) and is not in this
repository: set OB1_SMOKE_HARNESS to a copy. Skipped without node or the harness."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bench.ob1.smoke_aws import WORKSPACE, aws_gateway, run_smoke

HARNESS = Path(os.environ.get("OB1_SMOKE_HARNESS", "/nonexistent/live-smoke.mjs"))
CHECKS = {"health", "writeback", "memory_list", "conservative_recall_gate", "include_unconfirmed_recall",
          "usage_reporting", "review_action", "inspect_memory", "recall_trace", "unsafe_writeback_block"}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.skipif(not HARNESS.is_file(), reason="OB1_SMOKE_HARNESS does not name OB1's live-smoke.mjs")
def test_ob1_smoke_harness_passes_on_the_aws_adapters() -> None:
    with aws_gateway() as (base, mint):
        status, summary, stderr = run_smoke(HARNESS, f"{base}/ob1", mint([WORKSPACE], ["api:read", "api:write"],
                                                                         "ob1-client"))
    assert status == 0, stderr[-2000:]
    assert summary is not None and summary["ok"] is True
    assert set(summary["checks"]) == CHECKS
