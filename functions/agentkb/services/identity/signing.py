"""Signing keys of a local issuer (the dev issuer, tests): generated in memory, published as a JWKS, rotated.

Keys are made with `cryptography` and tokens signed with PyJWT; nothing here verifies (verifier.py does).
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

DEFAULT_TTL_S = 3600


@dataclass(frozen=True)
class SigningKey:
    kid: str
    alg: str  # RS256 or ES256
    private: Any

    def public_jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        jwk: dict[str, Any] = (RSAAlgorithm.to_jwk(public, as_dict=True) if self.alg == "RS256"
                               else ECAlgorithm.to_jwk(public, as_dict=True))
        return {**jwk, "kid": self.kid, "alg": self.alg, "use": "sig"}


def new_key(alg: str = "RS256") -> SigningKey:
    if alg == "RS256":
        private: Any = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    elif alg == "ES256":
        private = ec.generate_private_key(ec.SECP256R1())
    else:
        raise ValueError(f"unsupported algorithm {alg!r} (RS256 or ES256)")
    return SigningKey(kid=secrets.token_hex(8), alg=alg, private=private)


class KeyRing:
    """The keys an issuer publishes; the newest signs. `rotate` adds one, `retire` stops publishing one."""

    def __init__(self, issuer: str, audience: str, alg: str = "RS256") -> None:
        self.issuer, self.audience = issuer, audience
        self._lock = threading.Lock()
        self._keys = [new_key(alg)]

    @property
    def current(self) -> SigningKey:
        with self._lock:
            return self._keys[-1]

    def rotate(self, alg: str | None = None) -> SigningKey:
        key = new_key(alg or self.current.alg)
        with self._lock:
            self._keys.append(key)
        return key

    def retire(self, kid: str) -> None:
        with self._lock:
            self._keys = [k for k in self._keys if k.kid != kid] or self._keys

    def jwks(self) -> dict[str, Any]:
        with self._lock:
            return {"keys": [k.public_jwk() for k in self._keys]}

    def mint(self, sub: str, scopes: list[str], workspaces: list[str], /, *, ttl_s: int = DEFAULT_TTL_S,
             workspaces_claim: str = "workspaces", key: SigningKey | None = None, **claims: Any) -> str:
        """An access token (RFC 9068 shape): iss, sub, aud, iat, nbf, exp, jti, scope, the workspaces claim;
        `claims` add to or override them (tests: an expired token, another audience)."""
        now = int(time.time())
        body: dict[str, Any] = {"iss": self.issuer, "sub": sub, "aud": self.audience, "iat": now, "nbf": now,
                                "exp": now + ttl_s, "jti": secrets.token_hex(8), "scope": " ".join(scopes),
                                workspaces_claim: list(workspaces), **claims}
        signer = key or self.current
        return jwt.encode({k: v for k, v in body.items() if v is not None}, signer.private, algorithm=signer.alg,
                          headers={"kid": signer.kid, "typ": "at+jwt"})
