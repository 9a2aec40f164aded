"""The list routes' query strings with AGENTKB_BACKEND=aws (moto DynamoDB, the in-memory OpenSearch): the same
flow as on the embedded engine (tests/list_query_flows.py)."""

from __future__ import annotations

from testkit.aws_backend import AwsBackend
from tests.list_query_flows import flow_list_query_strings


def test_list_query_strings_as_documented(aws_backend: AwsBackend) -> None:
    flow_list_query_strings(lambda workspaces, scopes, principal: aws_backend.key(workspaces, scopes, principal))
