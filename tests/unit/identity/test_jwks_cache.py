"""The JWKS cache on a clock the test turns: TTL, one rate-limited refetch per unknown kid, failures answered
503 + Retry-After (never an accept), discovery's own rules. No network: the fetch is a function here."""

from __future__ import annotations

from typing import Any

import pytest

from agentkb.config import https_or_loopback
from agentkb.errors import ServiceUnavailable
from agentkb.services.identity.jwks import IssuerUnreachable, JwksCache, jwks_uri_of, signing_keys

ISSUER = "https://idp.example.test"
RSA = {"kty": "RSA", "kid": "k1", "n": "AQAB", "e": "AQAB"}


class Idp:
    def __init__(self) -> None:
        self.keys: list[dict[str, Any]] = [RSA]
        self.calls: list[str] = []
        self.down = False
        self.discovery: dict[str, Any] = {"issuer": ISSUER, "jwks_uri": f"{ISSUER}/keys"}

    def __call__(self, url: str) -> dict[str, Any]:
        self.calls.append(url)
        if self.down:
            raise IssuerUnreachable("down")
        return self.discovery if url.endswith("openid-configuration") else {"keys": self.keys}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture()
def idp() -> Idp:
    return Idp()


@pytest.fixture()
def clock() -> Clock:
    return Clock()


def cache(idp: Idp, clock: Clock) -> JwksCache:
    return JwksCache(ISSUER, idp, ttl_s=600, min_refetch_s=30, retry_after_s=20, clock=clock)


def test_first_use_discovers_then_fetches_and_then_serves_from_memory(idp: Idp, clock: Clock) -> None:
    keys = cache(idp, clock)
    assert keys.key("k1") == RSA
    assert idp.calls == [f"{ISSUER}/.well-known/openid-configuration", f"{ISSUER}/keys"]
    clock.now += 599
    assert keys.key("k1") == RSA and len(idp.calls) == 2
    clock.now += 1  # the TTL has passed: refetched (discovery is not repeated)
    assert keys.key("k1") == RSA and idp.calls[2:] == [f"{ISSUER}/keys"]


def test_unknown_kids_refetch_at_most_once_per_interval(idp: Idp, clock: Clock) -> None:
    keys = cache(idp, clock)
    keys.key("k1")
    clock.now += 31
    for n in range(50):  # a flood of garbage kids
        assert keys.key(f"garbage-{n}") is None
    assert len(idp.calls) == 3  # discovery, first JWKS, one refetch
    idp.keys = [RSA, {**RSA, "kid": "k2"}]
    assert keys.key("k2") is None  # still inside the interval: refused, no fetch
    clock.now += 30
    assert keys.key("k2") == {**RSA, "kid": "k2"} and len(idp.calls) == 4


def test_a_first_fetch_failure_is_503_with_retry_after_and_no_fetch_until_then(idp: Idp, clock: Clock) -> None:
    idp.down = True
    keys = cache(idp, clock)
    with pytest.raises(ServiceUnavailable) as caught:
        keys.key("k1")
    assert caught.value.headers == {"Retry-After": "20"}
    assert caught.value.details == {"reason": "identity_provider_unavailable"}
    calls = len(idp.calls)
    clock.now += 5
    with pytest.raises(ServiceUnavailable) as again:
        keys.key("k1")
    assert again.value.headers == {"Retry-After": "15"} and len(idp.calls) == calls
    idp.down = False
    clock.now += 15
    assert keys.key("k1") == RSA


def test_an_expired_cache_whose_refetch_fails_refuses_rather_than_using_old_keys(idp: Idp, clock: Clock) -> None:
    keys = cache(idp, clock)
    keys.key("k1")
    idp.down = True
    clock.now += 600
    with pytest.raises(ServiceUnavailable):
        keys.key("k1")


def test_fresh_keys_keep_verifying_while_a_kid_miss_refetch_fails(idp: Idp, clock: Clock) -> None:
    keys = cache(idp, clock)
    keys.key("k1")
    idp.down = True
    clock.now += 31
    with pytest.raises(ServiceUnavailable):
        keys.key("unknown")
    assert keys.key("k1") == RSA


def test_discovery_must_name_the_configured_issuer_and_a_safe_jwks_uri(idp: Idp) -> None:
    idp.discovery = {"issuer": "https://evil.example.test", "jwks_uri": f"{ISSUER}/keys"}
    with pytest.raises(IssuerUnreachable):
        jwks_uri_of(ISSUER, idp)
    idp.discovery = {"issuer": ISSUER, "jwks_uri": "http://idp.example.test/keys"}
    with pytest.raises(IssuerUnreachable):
        jwks_uri_of(ISSUER, idp)


def test_only_signing_keys_with_a_kid_are_kept() -> None:
    document = {"keys": [RSA, {**RSA, "kid": "enc", "use": "enc"}, {"kty": "oct", "kid": "hmac", "k": "c2VjcmV0"},
                         {"kty": "RSA", "n": "AQAB", "e": "AQAB"}, "junk"]}
    assert list(signing_keys(document)) == ["k1"]


@pytest.mark.parametrize(("url", "ok"), [
    ("https://login.example.com/tenant/v2.0", True), ("http://127.0.0.1:8790", True), ("http://localhost:1", True),
    ("http://[::1]:8790", True), ("http://idp.example.com", False), ("ftp://idp.example.com", False),
    ("https://user:pw@idp.example.com", False), ("https://", False), ("not a url", False),
])
def test_issuers_are_https_or_loopback(url: str, ok: bool) -> None:
    assert https_or_loopback(url) is ok
