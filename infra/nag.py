"""cdk-nag 3 helpers: every acknowledgement is scoped to one construct and carries a reason."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Acknowledge one AwsSolutions finding (e.g. `AwsSolutions-IAM5[Resource::*]`) on one construct."""
    if len(reason.strip()) < 20:
        raise ValueError(f"an acknowledgement of {rule} needs a real reason")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))
