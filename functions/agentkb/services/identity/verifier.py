"""Bearer JWTs from the configured issuer -> a Principal (`sub`), verified with PyJWT (never by hand).

Imported only when a request brings `Authorization: Bearer` with a token that is not an agentkb key, so the
API-key path never loads PyJWT or `cryptography`.

Checks, in order: size and shape; header `alg` RS256 or ES256 (never `none`, never HMAC: an HS256 token "signed"
with the issuer's public key is refused before any key is looked at); a `kid` the issuer publishes, of the
algorithm's key type; the signature; `iss`, `exp` (required), `nbf` and `iat` with LEEWAY_S of clock skew;
the audience; a `sub`. Any refusal is InvalidToken (401, `WWW-Authenticate: Bearer error="invalid_token"`).
"""

from __future__ import annotations

import threading
from typing import Any

import jwt

from agentkb.config import Settings
from agentkb.errors import InvalidToken
from agentkb.models.domain import Principal
from agentkb.services.identity.claims import audience_matches, scopes_of, subject_of, workspaces_of
from agentkb.services.identity.jwks import KEY_TYPES, Fetch, JwksCache, fetch_json

ALGORITHMS = tuple(KEY_TYPES)  # RS256, ES256
LEEWAY_S = 60
MAX_TOKEN_CHARS = 8192
CURVES = {"ES256": "P-256"}


class TokenVerifier:
    """One issuer + audience + workspaces claim, with its key cache."""

    def __init__(self, issuer: str, audience: str, workspaces_claim: str = "workspaces", scope_prefix: str = "",
                 keys: JwksCache | None = None) -> None:
        self.issuer, self.audience = issuer, audience
        self.workspaces_claim, self.scope_prefix = workspaces_claim, scope_prefix
        self.keys = keys or JwksCache(issuer)

    def verify(self, token: str) -> Principal:
        claims = self.claims(token)
        sub = subject_of(claims)
        if sub is None:
            raise InvalidToken("the token has no usable sub claim")
        return Principal(id=sub, workspaces=workspaces_of(claims, self.workspaces_claim, self.scope_prefix),
                         scopes=scopes_of(claims, self.scope_prefix), issuer=self.issuer)

    def claims(self, token: str) -> dict[str, Any]:
        if len(token) > MAX_TOKEN_CHARS or token.count(".") != 2:
            raise InvalidToken("the token is not a signed JWT")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken("the token is not a well-formed JWT") from exc
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ALGORITHMS:
            raise InvalidToken("the token's algorithm is not accepted (RS256 or ES256 only)")
        if not isinstance(kid, str) or not kid:
            raise InvalidToken("the token names no signing key (kid)")
        jwk = self.keys.key(kid)
        if jwk is None or not _fits(jwk, alg):
            raise InvalidToken("the token's signing key is not one the issuer publishes")
        try:
            key = jwt.PyJWK(jwk, algorithm=alg).key
            claims: dict[str, Any] = jwt.decode(
                token, key=key, algorithms=[alg], issuer=self.issuer, leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "sub"], "verify_aud": False})
        except jwt.ExpiredSignatureError as exc:
            raise InvalidToken("the token has expired") from exc
        except jwt.ImmatureSignatureError as exc:
            raise InvalidToken("the token is not valid yet") from exc
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidToken(f"the token has no {exc.claim} claim") from exc
        except jwt.InvalidIssuerError as exc:
            raise InvalidToken("the token is from another issuer") from exc
        except jwt.PyJWTError as exc:
            raise InvalidToken("the token's signature or claims are not valid") from exc
        if not audience_matches(claims, self.audience):
            raise InvalidToken("the token is for another audience")
        return claims


def _fits(jwk: dict[str, Any], alg: str) -> bool:
    """The key is of the algorithm's type (and curve), and its own `alg`, when it names one, is that algorithm."""
    if jwk.get("kty") != KEY_TYPES[alg] or jwk.get("alg", alg) != alg:
        return False
    return alg not in CURVES or jwk.get("crv") == CURVES[alg]


_VERIFIERS: dict[tuple[str, str, str, str], TokenVerifier] = {}
_LOCK = threading.Lock()


def verifier_for(settings: Settings, fetch: Fetch = fetch_json) -> TokenVerifier:
    """The process's verifier for these settings (its JWKS cache lives as long as the Lambda container)."""
    if settings.oidc_issuer is None or settings.oidc_audience is None:
        raise InvalidToken("this deployment accepts no access tokens (no issuer is configured)")
    ident = (settings.oidc_issuer, settings.oidc_audience, settings.oidc_workspaces_claim, settings.oidc_scope_prefix)
    with _LOCK:
        verifier = _VERIFIERS.get(ident)
        if verifier is None:
            verifier = TokenVerifier(*ident, keys=JwksCache(settings.oidc_issuer, fetch))
            _VERIFIERS[ident] = verifier
        return verifier


def verify_bearer(token: str, settings: Settings) -> Principal:
    return verifier_for(settings).verify(token)


def forget_verifiers() -> None:
    """Drop every cached verifier and its keys (tests)."""
    with _LOCK:
        _VERIFIERS.clear()
