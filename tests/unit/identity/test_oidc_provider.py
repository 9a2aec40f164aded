"""The loopback OpenID provider the console's browser tests sign in with (testkit/oidc_provider.py): its PKCE
check (RFC 7636), the code's single use, the exact redirect URI, and CORS only for the registered origins."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import pytest

from testkit.oidc_provider import OidcProvider, User, pkce_matches, s256

RFC_VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"  # RFC 7636 Appendix B
RFC_CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
REDIRECT = "http://127.0.0.1:9999/console/"
VERIFIER = "v" * 43


def test_s256_is_the_rfc_example() -> None:
    assert s256(RFC_VERIFIER) == RFC_CHALLENGE
    assert pkce_matches(RFC_VERIFIER, RFC_CHALLENGE)


@pytest.mark.parametrize("verifier", [
    RFC_VERIFIER[:-1] + "l",  # one character off
    RFC_VERIFIER[:42],  # shorter than 43
    "a" * 129,  # longer than 128
    RFC_VERIFIER[:-1] + "+",  # outside the unreserved characters
    RFC_CHALLENGE,  # the challenge itself ("plain" is not S256)
    "",
])
def test_any_other_verifier_is_refused(verifier: str) -> None:
    assert not pkce_matches(verifier, RFC_CHALLENGE)


@pytest.fixture
def provider() -> Iterator[OidcProvider]:
    started = OidcProvider(clients={"console": REDIRECT}, users={
        "alice": User("alice", ("api:read",), ("demo",))}).start()
    try:
        yield started
    finally:
        started.stop()


def _authorize(provider: OidcProvider, **overrides: str) -> dict[str, str]:
    return {"client_id": "console", "redirect_uri": REDIRECT, "response_type": "code", "state": "s1",
            "nonce": "n1", "code_challenge": s256(VERIFIER), "code_challenge_method": "S256", **overrides}


def _code(provider: OidcProvider) -> str:
    back = urlsplit(provider.decide(_authorize(provider), "alice", approve=True))
    answer = {k: v[-1] for k, v in parse_qs(back.query).items()}
    assert answer["state"] == "s1" and answer["iss"] == provider.issuer
    return answer["code"]


def _token_form(code: str, **overrides: str) -> dict[str, str]:
    return {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "console",
            "code_verifier": VERIFIER, **overrides}


def test_a_code_buys_one_token_pair_once(provider: OidcProvider) -> None:
    code = _code(provider)
    status, body = provider.token_response(_token_form(code))
    assert status == 200 and body["token_type"] == "Bearer"
    access = jwt.decode(body["access_token"], options={"verify_signature": False})
    ident = jwt.decode(body["id_token"], options={"verify_signature": False})
    assert (access["sub"], access["aud"], access["scope"], access["workspaces"]) == ("alice", "agentkb", "api:read",
                                                                                      ["demo"])
    assert (ident["aud"], ident["nonce"], ident["iss"]) == ("console", "n1", provider.issuer)
    assert provider.token_response(_token_form(code)) == (400, {"error": "invalid_grant", "error_description":
                                                                "unknown, used or expired code"})


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("code_verifier", "w" * 43, "code_verifier does not match the code_challenge"),
    ("redirect_uri", "http://127.0.0.1:9999/other/", "client_id or redirect_uri differs"),
    ("client_id", "someone-else", "client_id or redirect_uri differs"),
])
def test_a_code_with_another_verifier_client_or_redirect_is_refused_and_spent(provider: OidcProvider, field: str,
                                                                             value: str, reason: str) -> None:
    code = _code(provider)
    status, body = provider.token_response(_token_form(code, **{field: value}))
    assert status == 400 and body["error"] == "invalid_grant" and body["error_description"].startswith(reason)
    assert provider.token_response(_token_form(code))[0] == 400  # the code is gone: no second try


@pytest.mark.parametrize(("overrides", "problem"), [
    ({"redirect_uri": "http://127.0.0.1:9999/console/evil"}, "redirect_uri is not the one registered"),
    ({"client_id": "nobody"}, "unknown client_id"), ({"response_type": "token"}, "response_type must be code"),
    ({"code_challenge_method": "plain"}, "an S256 code_challenge is required"),
])
def test_an_authorization_request_out_of_bounds_is_refused(provider: OidcProvider, overrides: dict[str, str],
                                                          problem: str) -> None:
    assert str(provider.authorize_problem(_authorize(provider, **overrides))).startswith(problem)


def test_a_denial_goes_back_with_the_state_and_no_code(provider: OidcProvider) -> None:
    back = parse_qs(urlsplit(provider.decide(_authorize(provider), "alice", approve=False)).query)
    assert back["error"] == ["access_denied"] and back["state"] == ["s1"] and "code" not in back


def _post_token(provider: OidcProvider, origin: str) -> tuple[int, str | None]:
    request = urllib.request.Request(provider.issuer + "/token", data=urlencode(_token_form("nope")).encode(),
                                     headers={"Origin": origin}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("Access-Control-Allow-Origin")
    except urllib.error.HTTPError as exc:
        assert json.loads(exc.read())["error"] == "invalid_grant"
        return exc.code, exc.headers.get("Access-Control-Allow-Origin")


def test_the_token_endpoint_answers_cors_for_the_registered_origin_only(provider: OidcProvider) -> None:
    assert _post_token(provider, "http://127.0.0.1:9999") == (400, "http://127.0.0.1:9999")
    assert _post_token(provider, "http://127.0.0.1:1234") == (400, None)
