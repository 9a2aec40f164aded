"""cdk-nag 3 and checkov helpers: every acknowledgement is scoped to one construct and carries a reason."""

from __future__ import annotations

from aws_cdk import Acknowledgment, CfnResource, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge one AwsSolutions finding (e.g. `AwsSolutions-IAM5[Resource::*]`) on one construct.

    The plain rule id is the form cdk-nag 3 matches itself (CDK stores it as `Annotation::<id>`), so both
    synthesis-time validation and `AwsSolutionsChecks().validate_scope()` honour it.
    """
    if len(reason.strip()) < 20:
        raise ValueError(f"an acknowledgement of {rule} needs a real reason")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))


def checkov_skip(scope: IConstruct, check_id: str, reason: str) -> None:
    """Explain one design-accepted checkov finding (e.g. `CKV_AWS_117`) on one CloudFormation resource.

    Written as the resource's `Metadata.checkov.skip` entry, the form checkov reads from a template: the
    finding is reported as skipped with this reason, never silently dropped (tests/infra/test_infra_checkov.py).
    """
    if len(reason.strip()) < 20:
        raise ValueError(f"skipping {check_id} needs a real reason")
    resource = scope if isinstance(scope, CfnResource) else scope.node.default_child
    if not isinstance(resource, CfnResource):
        raise TypeError(f"{scope.node.path} has no CloudFormation resource to carry a checkov skip")
    current = resource.get_metadata("checkov") or {}
    skips = [s for s in current.get("skip", []) if s["id"] != check_id]
    resource.add_metadata("checkov", {"skip": [*skips, {"id": check_id, "comment": reason}]})
