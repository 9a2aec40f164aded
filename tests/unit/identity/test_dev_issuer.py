"""The dev issuer stays on loopback and its token endpoint refuses what RFC 6749 says it must (no server thread
is started here: the endpoint's answer is computed directly)."""

from __future__ import annotations

import pytest

from agentkb.services.identity.dev_issuer import DevIssuer


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com"])
def test_it_listens_on_loopback_only(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        DevIssuer(host=host)


def test_the_token_endpoint_grants_client_credentials_to_the_shared_secret_only() -> None:
    issuer = DevIssuer(client_secret="s3cret")
    try:
        grant = {"grant_type": ["client_credentials"], "scope": ["api:read api:write"], "workspace": ["demo,ws1"]}
        assert issuer.token_response({**grant, "grant_type": ["password"]}, None) == (
            400, {"error": "unsupported_grant_type"})
        assert issuer.token_response(grant, ("agent", "wrong"))[0] == 401
        assert issuer.token_response({**grant, "client_id": ["agent"]}, None)[0] == 401  # no secret
        status, body = issuer.token_response(grant, ("agent", "s3cret"))
        assert status == 200 and body["token_type"] == "Bearer" and body["scope"] == "api:read api:write"
        assert issuer.discovery()["jwks_uri"] == f"{issuer.issuer}/jwks.json"
        assert issuer.issuer.startswith("http://127.0.0.1:")
    finally:
        issuer.stop()
