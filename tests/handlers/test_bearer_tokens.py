"""OAuth access tokens on the embedded engine, through the real handlers: every route family with a token only,
scopes, reach, refusals, personal memories and rate limits by `sub`, and API keys beside tokens
(tests/token_flows.py; the AWS engine runs the same flows in tests/handlers/aws/test_aws_bearer_tokens.py)."""

from __future__ import annotations

from pathlib import Path

from agentkb.composition import get_ports
from agentkb.services.identity.dev_issuer import DevIssuer
from tests import token_flows
from tests.helpers import body_of, invoke, mint, rest_event


def test_a_token_alone_uses_every_route_family(data_dir: Path, dev_issuer: DevIssuer) -> None:
    token_flows.flow_every_route_family(dev_issuer)
    token_flows.flow_http_api_v2_event(dev_issuer)


def test_scopes_and_workspace_reach(data_dir: Path, dev_issuer: DevIssuer) -> None:
    token_flows.flow_scopes_and_reach(dev_issuer)


def test_refused_tokens(data_dir: Path, dev_issuer: DevIssuer) -> None:
    token_flows.flow_refused_tokens(dev_issuer)


def test_personal_memories_and_rate_limits_follow_the_sub(data_dir: Path, dev_issuer: DevIssuer) -> None:
    token_flows.flow_personal_memories_follow_sub(dev_issuer)
    token_flows.flow_rate_limit_per_sub(dev_issuer)


def test_api_keys_keep_working_beside_tokens(data_dir: Path, dev_issuer: DevIssuer) -> None:
    key = mint(get_ports(), ["tok"], ["api:read"], "keyholder")
    for headers in ({"X-API-Key": key}, {"Authorization": f"Bearer {key}"}):
        response = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": "tok"}, headers=headers))
        assert response["statusCode"] == 200, body_of(response)
    bad = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": "tok"}, key="akb_nope_nope"))
    assert bad["statusCode"] == 401


def test_an_unreachable_issuer_answers_503_with_retry_after(data_dir: Path, dev_issuer: DevIssuer) -> None:
    token = dev_issuer.mint("alice", ["api:read"], ["tok"])
    dev_issuer.stop()  # the first token arrives after the issuer has gone: its keys cannot be known
    response = invoke("ingest", rest_event("GET", "/v1/memories", query={"workspace_id": "tok"},
                                           headers={"Authorization": f"Bearer {token}"}))
    assert response["statusCode"] == 503, body_of(response)
    assert body_of(response)["error"]["details"] == {"reason": "identity_provider_unavailable"}
    assert int(dict(response["multiValueHeaders"])["Retry-After"][0]) > 0
