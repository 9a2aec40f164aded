"""`-c reservedConcurrency=0`: an account whose concurrency quota is below the 200 the reserved defaults need can
still deploy. The default keeps every function's reservation (test_infra_hardening.py holds those values); the
disabled variant reserves nothing, and checkov reports CKV_AWS_115 on it as skipped with a reason, not failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from infra import constants as c
from infra.app import build_app, new_app
from infra.config import DeploymentConfig
from tests.infra.test_infra_checkov import scan


@pytest.mark.parametrize(("value", "reserved"), [(None, True), ("default", True), ("0", False), (0, False)])
def test_the_setting_is_parsed_from_cli_strings_and_cdk_json_numbers(value, reserved):
    context = {} if value is None else {c.CTX_RESERVED_CONCURRENCY: value}
    assert DeploymentConfig.from_node(new_app(context=context).node).reserved_concurrency is reserved


@pytest.mark.parametrize("value", ["5", "off", "-1", "none"])
def test_any_other_value_fails_the_synth_loudly(value):
    with pytest.raises(ValueError, match="reservedConcurrency"):
        DeploymentConfig.from_node(new_app(context={c.CTX_RESERVED_CONCURRENCY: value}).node)


@pytest.fixture(scope="module")
def unreserved(tmp_path_factory: pytest.TempPathFactory, synthesized) -> Path:
    # `synthesized` first: it builds the code asset this synth copies
    outdir = tmp_path_factory.mktemp("cdk.unreserved")
    build_app(context={"bundling": "skip", c.CTX_RESERVED_CONCURRENCY: "0"}, outdir=str(outdir)).synth()
    return outdir


def _api(outdir: Path) -> dict[str, Any]:
    (api,) = [json.loads(p.read_text()) for p in outdir.glob("*-api.template.json")]
    return api


def _functions(outdir: Path) -> dict[str, dict[str, Any]]:
    api = _api(outdir)
    return {r["Properties"]["Handler"].split(".")[0]: r for r in api["Resources"].values()
            if r["Type"] == "AWS::Lambda::Function" and "Handler" in r["Properties"]
            and r["Properties"]["Handler"].endswith(".handler.lambda_handler")}


def test_default_synth_reserves_and_the_disabled_one_reserves_nothing(synthesized, unreserved):
    default = _functions(synthesized.outdir)
    assert {name: f["Properties"]["ReservedConcurrentExecutions"] for name, f in default.items()} == {
        spec.name: spec.reserved_concurrency for spec in c.FUNCTIONS}
    disabled = _functions(unreserved)
    assert sorted(disabled) == sorted(spec.name for spec in c.FUNCTIONS)
    assert all("ReservedConcurrentExecutions" not in f["Properties"] for f in disabled.values())
    # the queue consumer keeps its own cap either way
    (mapping,) = [r for r in _api(unreserved)["Resources"].values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert mapping["Properties"]["ScalingConfig"]["MaximumConcurrency"] == c.QUEUE_MAX_CONCURRENCY


def test_checkov_explains_the_disabled_variant_and_fails_nothing(unreserved):
    reports = scan(unreserved)
    assert [(f["check_id"], f["resource"]) for r in reports for f in r["results"]["failed_checks"]] == []
    skipped = [s for r in reports for s in r["results"]["skipped_checks"] if s["check_id"] == "CKV_AWS_115"]
    for name in ("Search", "Recall", "Snapshot", "Ingest"):
        (skip,) = [s for s in skipped if s["resource"].startswith(f"AWS::Lambda::Function.Functions{name}Function")]
        assert "reservedConcurrency=0" in skip["check_result"]["suppress_comment"]
