"""OB1's own smoke harness (live-smoke.mjs, run by node) against the local gateway over the AWS adapters (moto + the
fake OpenSearch + the fake Bedrock): bench/ob1_smoke_aws.py. The harness is OB1's (FSL) and is not in this
repository: set OB1_SMOKE_HARNESS to a copy. Skipped without node or the harness."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

# Loaded by path: bench/ on sys.path would shadow the `recall` function package with bench/recall.py.
_spec = importlib.util.spec_from_file_location("ob1_smoke_aws", Path(__file__).resolve().parents[2] / "bench"
                                               / "ob1_smoke_aws.py")
assert _spec is not None and _spec.loader is not None
_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bench)
WORKSPACE, aws_gateway, run_smoke = _bench.WORKSPACE, _bench.aws_gateway, _bench.run_smoke

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
