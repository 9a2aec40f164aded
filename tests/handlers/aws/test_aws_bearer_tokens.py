"""OAuth access tokens on the AWS engine (moto + the OpenSearch and Bedrock doubles): the same flows as the
embedded engine (tests/token_flows.py), through the same gate; keys beside tokens; rate limits by `sub` in the
DynamoDB rate-limit table."""

from __future__ import annotations

from agentkb.services.identity.dev_issuer import DevIssuer
from testkit.aws_backend import AwsBackend
from tests import token_flows
from tests.helpers import body_of, invoke, rest_event


def test_a_token_alone_uses_every_route_family(aws_backend: AwsBackend, dev_issuer: DevIssuer) -> None:
    token_flows.flow_every_route_family(dev_issuer)
    token_flows.flow_http_api_v2_event(dev_issuer)


def test_scopes_reach_and_refusals(aws_backend: AwsBackend, dev_issuer: DevIssuer) -> None:
    token_flows.flow_scopes_and_reach(dev_issuer)
    token_flows.flow_refused_tokens(dev_issuer)


def test_personal_memories_and_rate_limits_follow_the_sub(aws_backend: AwsBackend, dev_issuer: DevIssuer) -> None:
    token_flows.flow_personal_memories_follow_sub(dev_issuer)
    token_flows.flow_rate_limit_per_sub(dev_issuer)


def test_api_keys_keep_working_beside_tokens(aws_backend: AwsBackend, dev_issuer: DevIssuer) -> None:
    key = aws_backend.key(["tok"], ["api:read"])
    response = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": "tok"}, key=key))
    assert response["statusCode"] == 200, body_of(response)
    token = dev_issuer.mint("alice", ["api:read"], ["tok"])
    response = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": "tok"},
                                           headers={"Authorization": f"Bearer {token}"}))
    assert response["statusCode"] == 200, body_of(response)
