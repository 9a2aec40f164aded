"""checkov (a scanner none of us wrote) over the synthesized templates: 0 failed checks, and every skipped one
is a design decision explained on its resource (infra/nag.py checkov_skip). `make lint` runs the same scan."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def checkov_binary() -> str | None:
    """The checkov of `make dev-install` (its own venv beside the project's: it pins an older boto3), else PATH."""
    own = Path(sys.executable).resolve().parent.parent / "checkov" / "bin" / "checkov"
    beside = Path(sys.executable).parent.parent / "checkov" / "bin" / "checkov"
    for candidate in (beside, own):
        if candidate.exists():
            return str(candidate)
    return shutil.which("checkov")


def scan(directory: Path) -> list[dict[str, Any]]:
    binary = checkov_binary()
    if binary is None:
        pytest.skip("checkov is not installed (make dev-install puts it in .venv/checkov)")
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE"}  # offline: no guideline download
    run = subprocess.run([binary, "-d", str(directory), "--framework", "cloudformation", "--compact", "-o",
                          "json"], capture_output=True, text=True, timeout=300, env=env, check=False)
    assert run.stdout.strip(), run.stderr[-2000:]
    report = json.loads(run.stdout)
    return report if isinstance(report, list) else [report]


@pytest.fixture(scope="module")
def reports(synthesized) -> list[dict[str, Any]]:
    return scan(synthesized.outdir)


def test_checkov_finds_no_unexplained_failure(reports):
    failed = [(f["check_id"], f["resource"]) for r in reports for f in r["results"]["failed_checks"]]
    assert failed == []
    passed = sum(r["summary"]["passed"] for r in reports)
    assert passed >= 150, "the scan must actually have checked the templates"
    for r in reports:
        for skipped in r["results"]["skipped_checks"]:
            assert len(skipped["check_result"].get("suppress_comment") or "") >= 20, skipped["check_id"]


def test_reserved_concurrency_is_checked_not_skipped(reports):
    # The real findings are fixed, not explained away: CKV_AWS_115 passes on the four functions
    passed = [p["resource"] for r in reports for p in r["results"]["passed_checks"] if p["check_id"] == "CKV_AWS_115"]
    for name in ("Search", "Recall", "Snapshot", "Ingest"):
        assert any(resource.startswith(f"AWS::Lambda::Function.Functions{name}Function") for resource in passed), name


def test_every_skip_explains_a_finding_that_would_fail(reports, synthesized, tmp_path):
    # Given the same templates with every checkov skip removed, each skipped (check, resource) must fail there
    for template in synthesized.outdir.glob("*.template.json"):
        document = json.loads(template.read_text())
        for resource in document.get("Resources", {}).values():
            resource.get("Metadata", {}).pop("checkov", None)
        (tmp_path / template.name).write_text(json.dumps(document))
    unexplained = {(f["check_id"], f["resource"]) for r in scan(tmp_path) for f in r["results"]["failed_checks"]}
    skipped = {(s["check_id"], s["resource"]) for r in reports for s in r["results"]["skipped_checks"]}
    assert skipped and skipped == unexplained
