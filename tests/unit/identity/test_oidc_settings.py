"""AGENTKB_OIDC_*: off by default; an issuer needs an audience and https (http only on loopback)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentkb.config import Settings


def test_tokens_are_off_unless_an_issuer_is_set() -> None:
    settings = Settings()
    assert settings.oidc_issuer is None and settings.oidc_workspaces_claim == "workspaces"


def test_an_issuer_with_its_audience_is_accepted() -> None:
    settings = Settings(oidc_issuer="https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc",
                        oidc_audience="client-id", oidc_scope_prefix="agentkb/")
    assert settings.oidc_audience == "client-id"
    assert Settings(oidc_issuer="http://127.0.0.1:8790", oidc_audience="agentkb").oidc_issuer


@pytest.mark.parametrize(("issuer", "audience"), [
    ("https://idp.example.com", None), ("http://idp.example.com", "agentkb"), ("idp.example.com", "agentkb"),
])
def test_an_incomplete_or_plain_http_issuer_fails_the_cold_start(issuer: str, audience: str | None) -> None:
    with pytest.raises(ValidationError):
        Settings(oidc_issuer=issuer, oidc_audience=audience)
