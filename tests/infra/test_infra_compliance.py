"""cdk-nag AwsSolutions clean, every acknowledgement scoped and reasoned (and needed), cfn-lint clean."""

from __future__ import annotations

import pytest
from aws_cdk import Stack, Validations
from aws_cdk.assertions import Annotations, Match
from cdk_nag import AwsSolutionsChecks

import infra.components.functions
import infra.components.rest_api
import infra.components.storage
from infra.app import build_app

ACK_MODULES = (infra.components.functions, infra.components.rest_api, infra.components.storage)
# CDK itself emits DependsOn for a function's role next to the GetAtt, and for the stage next to the Ref.
CFN_LINT_IGNORED = ["W3005"]


def acknowledgements(app) -> list[tuple[str, str, str, bool]]:
    found = []
    for construct in app.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule, reason in entry.data.items():
                    found.append((construct.node.path, rule, reason, isinstance(construct, Stack)))
    return found


def test_no_unacknowledged_nag_errors_or_warnings(synthesized):
    report = AwsSolutionsChecks().validate_scope(synthesized.app)
    assert [(v.severity, v.rule_name, [r.construct_path for r in v.violating_resources])
            for v in report.violations] == []
    assert report.success


def test_nag_pack_is_registered_and_fails_synthesis_on_findings(tmp_path):
    # Given the app plus a deliberately non-compliant queue, synthesis itself must fail on the nag error
    from aws_cdk import aws_sqs as sqs

    app = build_app(context={"bundling": "skip"}, outdir=str(tmp_path))
    sqs.Queue(Stack(app, "bad"), "NoDlq")
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    assert "AwsSolutions-SQS3" in (tmp_path / "validation-report.json").read_text()


def test_every_acknowledgement_is_on_a_resource_with_a_reason(synthesized):
    acks = acknowledgements(synthesized.app)
    assert acks, "expected scoped acknowledgements"
    for path, rule, reason, on_stack in acks:
        assert not on_stack, f"{rule} acknowledged on a whole stack ({path})"
        assert "/" in path
        assert rule.removeprefix("Annotation::").startswith("AwsSolutions-"), rule
        assert len(reason) >= 20, f"{rule} at {path} needs a real reason"


def test_every_acknowledgement_is_needed(monkeypatch):
    # Given the same app built without acknowledgements, every acknowledged (construct, rule) must be a finding
    recorded: list[tuple[str, str]] = []
    for module in ACK_MODULES:
        monkeypatch.setattr(module, "acknowledge", lambda scope, rule, reason: recorded.append((scope.node.path, rule)))
    app = build_app(context={"bundling": "skip"})
    findings = {(r.construct_path, v.rule_name) for v in AwsSolutionsChecks().validate_scope(app).violations
                for r in v.violating_resources}
    unused = [(path, rule) for path, rule in recorded
              if not any(p.startswith(path + "/") and name == rule for p, name in findings)]
    assert unused == []


def test_no_cdk_warnings_or_errors(synthesized):
    for stack in (synthesized.data_stack, synthesized.api_stack):
        annotations = Annotations.from_stack(stack)
        assert annotations.find_error("*", Match.any_value()) == []
        assert annotations.find_warning("*", Match.any_value()) == []


@pytest.mark.parametrize("which", ["data", "api"])
def test_cfn_lint_clean(synthesized, which):
    from cfnlint.api import ManualArgs, lint_file

    stack = synthesized.data_stack if which == "data" else synthesized.api_stack
    template = synthesized.outdir / f"{stack.artifact_id}.template.json"
    matches = lint_file(template, ManualArgs(ignore_checks=CFN_LINT_IGNORED))
    assert [str(m) for m in matches] == []
