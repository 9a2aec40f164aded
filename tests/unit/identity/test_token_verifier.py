"""The bearer-token verifier against keys the test generates: every refusal the issue lists, and what a good
token grants (scopes in both forms, workspaces, sub). The keys come from an in-memory KeyRing; no network."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from agentkb.errors import InvalidToken, ServiceUnavailable
from agentkb.services.identity.jwks import JwksCache
from agentkb.services.identity.signing import KeyRing, new_key
from agentkb.services.identity.verifier import LEEWAY_S, TokenVerifier

ISSUER, AUDIENCE = "https://idp.example.test", "agentkb"


class Publisher:
    """Discovery + JWKS of a KeyRing as the fetch function of a JwksCache; counts fetches, can fail."""

    def __init__(self, ring: KeyRing) -> None:
        self.ring, self.calls, self.down = ring, 0, False

    def __call__(self, url: str) -> dict[str, Any]:
        self.calls += 1
        if self.down:
            raise OSError("connection refused")
        if url.endswith("/.well-known/openid-configuration"):
            return {"issuer": ISSUER, "jwks_uri": f"{ISSUER}/jwks"}
        return self.ring.jwks()


@pytest.fixture()
def ring() -> KeyRing:
    return KeyRing(ISSUER, AUDIENCE)


@pytest.fixture()
def verifier(ring: KeyRing) -> TokenVerifier:
    return TokenVerifier(ISSUER, AUDIENCE, keys=JwksCache(ISSUER, Publisher(ring)))


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any]) -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"


def claims_of(**over: Any) -> dict[str, Any]:
    now = int(time.time())
    return {"iss": ISSUER, "sub": "alice", "aud": AUDIENCE, "exp": now + 600, "iat": now, "scope": "api:read",
            "workspaces": ["demo"], **over}


def refusal(verifier: TokenVerifier, token: str) -> str:
    with pytest.raises(InvalidToken) as caught:
        verifier.verify(token)
    assert caught.value.http_status == 401
    assert caught.value.headers["WWW-Authenticate"].startswith('Bearer realm="agentkb", error="invalid_token"')
    return str(caught.value.details["reason"])


def test_a_good_token_is_its_sub_with_its_scopes_and_workspaces(ring: KeyRing, verifier: TokenVerifier) -> None:
    principal = verifier.verify(ring.mint("alice", ["api:read", "api:write", "openid"], ["demo", "ws1"]))
    assert (principal.id, principal.issuer) == ("alice", ISSUER)
    assert principal.scopes == ("api:read", "api:write")  # openid grants nothing here
    assert principal.workspaces == ("demo", "ws1") and principal.key_id is None


def test_es256_keys_verify_too(ring: KeyRing, verifier: TokenVerifier) -> None:
    key = ring.rotate("ES256")
    assert verifier.verify(ring.mint("bob", ["api:read"], ["demo"], key=key)).id == "bob"


@dataclass(frozen=True)
class FromNow:
    """A time claim relative to when the test runs (not to collection: a suite can run for minutes after it)."""

    seconds: int


@pytest.mark.parametrize(("over", "reason"), [
    ({"exp": FromNow(-LEEWAY_S - 5)}, "expired"),
    ({"nbf": FromNow(LEEWAY_S + 60)}, "not valid yet"),
    ({"iss": "https://other.example.test"}, "another issuer"),
    ({"aud": "someone-else"}, "another audience"),
    ({"aud": None, "client_id": "someone-else"}, "another audience"),
    ({"sub": None}, "sub"),
    ({"exp": None}, "no exp claim"),
])
def test_claims_that_refuse_a_token(ring: KeyRing, verifier: TokenVerifier, over: dict[str, Any],
                                    reason: str) -> None:
    claims = {k: int(time.time()) + v.seconds if isinstance(v, FromNow) else v for k, v in over.items()}
    assert reason in refusal(verifier, ring.mint("alice", ["api:read"], ["demo"], **claims))


def test_a_small_clock_skew_is_tolerated(ring: KeyRing, verifier: TokenVerifier) -> None:
    now = int(time.time())
    token = ring.mint("alice", ["api:read"], ["demo"], exp=now - LEEWAY_S // 2, nbf=now + LEEWAY_S // 2)
    assert verifier.verify(token).id == "alice"


def test_alg_none_is_refused(ring: KeyRing, verifier: TokenVerifier) -> None:
    token = unsigned({"alg": "none", "typ": "JWT", "kid": ring.current.kid}, claims_of()) + "."
    assert "algorithm" in refusal(verifier, token)


def test_hs256_signed_with_the_public_key_is_refused(ring: KeyRing, verifier: TokenVerifier) -> None:
    """The classic confusion attack: HMAC keyed with the issuer's public key, which anyone can fetch."""
    pem = ring.current.private.public_key().public_bytes(serialization.Encoding.PEM,
                                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    signing_input = unsigned({"alg": "HS256", "typ": "JWT", "kid": ring.current.kid}, claims_of())
    signature = b64(hmac.new(pem, signing_input.encode(), hashlib.sha256).digest())
    assert "algorithm" in refusal(verifier, f"{signing_input}.{signature}")


def test_a_key_of_the_wrong_type_for_the_alg_is_refused(ring: KeyRing, verifier: TokenVerifier) -> None:
    """A token saying ES256 but naming the RSA key's kid."""
    other = new_key("ES256")
    token = jwt.encode(claims_of(), other.private, algorithm="ES256", headers={"kid": ring.current.kid})
    assert "signing key" in refusal(verifier, token)


def test_a_forged_signature_is_refused(ring: KeyRing, verifier: TokenVerifier) -> None:
    impostor = new_key("RS256")
    token = jwt.encode(claims_of(), impostor.private, algorithm="RS256", headers={"kid": ring.current.kid})
    assert "signature" in refusal(verifier, token)


def test_an_unknown_kid_is_refused(ring: KeyRing, verifier: TokenVerifier) -> None:
    stranger = new_key("RS256")
    token = jwt.encode(claims_of(), stranger.private, algorithm="RS256", headers={"kid": stranger.kid})
    assert "signing key" in refusal(verifier, token)


@pytest.mark.parametrize("token", ["", "abc", "a.b", "a.b.c", "x" * 9000 + ".a.b"])
def test_garbage_is_refused(verifier: TokenVerifier, token: str) -> None:
    refusal(verifier, token)


def test_a_token_without_kid_is_refused(ring: KeyRing, verifier: TokenVerifier) -> None:
    token = jwt.encode(claims_of(), ring.current.private, algorithm="RS256")
    assert "kid" in refusal(verifier, token)


def test_rotated_keys_verify_after_one_refetch(ring: KeyRing) -> None:
    publisher = Publisher(ring)
    now = [1000.0]
    verifier = TokenVerifier(ISSUER, AUDIENCE, keys=JwksCache(ISSUER, publisher, min_refetch_s=30,
                                                               clock=lambda: now[0]))
    old = ring.current
    assert verifier.verify(ring.mint("alice", ["api:read"], ["demo"])).id == "alice"
    fetched = publisher.calls
    ring.rotate()
    ring.retire(old.kid)
    now[0] += 31
    assert verifier.verify(ring.mint("alice", ["api:read"], ["demo"])).id == "alice"  # new kid: one refetch
    assert publisher.calls == fetched + 1
    assert "signing key" in refusal(verifier, ring.mint("alice", ["api:read"], ["demo"], key=old))


def test_scp_array_and_scp_string_and_cognito_prefix(ring: KeyRing) -> None:
    keys = JwksCache(ISSUER, Publisher(ring))
    plain = TokenVerifier(ISSUER, AUDIENCE, keys=keys)
    assert plain.verify(ring.mint("a", [], ["demo"], scope=None, scp=["api:read", "api:write"])).scopes == (
        "api:read", "api:write")
    assert plain.verify(ring.mint("a", [], ["demo"], scope=None, scp="api:write")).scopes == ("api:write",)
    cognito = TokenVerifier(ISSUER, AUDIENCE, scope_prefix="agentkb/", keys=keys)
    token = ring.mint("a", ["agentkb/api:read", "other/api:write"], ["demo"], aud=None, client_id=AUDIENCE)
    assert cognito.verify(token).scopes == ("api:read",)


def test_workspaces_claim_forms_and_no_wildcard(ring: KeyRing) -> None:
    keys = JwksCache(ISSUER, Publisher(ring))
    custom = TokenVerifier(ISSUER, AUDIENCE, workspaces_claim="https://agentkb/ws", keys=keys)
    token = ring.mint("a", ["api:read"], [], **{"https://agentkb/ws": "demo, ws1 *"})
    assert custom.verify(token).workspaces == ("demo", "ws1")
    assert TokenVerifier(ISSUER, AUDIENCE, keys=keys).verify(ring.mint("a", ["api:read"], ["*"])).workspaces == ()


def test_an_unreachable_issuer_is_503_never_an_accept(ring: KeyRing) -> None:
    publisher = Publisher(ring)
    publisher.down = True
    verifier = TokenVerifier(ISSUER, AUDIENCE, keys=JwksCache(ISSUER, publisher, retry_after_s=30))
    with pytest.raises(ServiceUnavailable) as caught:
        verifier.verify(ring.mint("alice", ["api:read"], ["demo"]))
    assert caught.value.http_status == 503 and caught.value.headers["Retry-After"] == "30"


def test_workspaces_as_scopes_and_several_audiences(ring: KeyRing) -> None:
    """Cognito's shape: no custom claim, `client_id` instead of `aud`, prefixed scopes `agentkb/workspace:<id>`."""
    keys = JwksCache(ISSUER, Publisher(ring))
    cognito = TokenVerifier(ISSUER, "client-a,client-b", workspaces_claim="scope", scope_prefix="agentkb/",
                            keys=keys)
    token = ring.mint("client-b", ["agentkb/api:read", "agentkb/workspace:demo", "workspace:unprefixed",
                                   "other/workspace:x", "agentkb/workspace:*"], [], aud=None, client_id="client-b")
    principal = cognito.verify(token)
    assert (principal.scopes, principal.workspaces) == (("api:read",), ("demo",))  # only the prefixed count
    assert "another audience" in refusal(cognito, ring.mint("c", ["agentkb/api:read"], [], aud=None,
                                                            client_id="client-c"))
