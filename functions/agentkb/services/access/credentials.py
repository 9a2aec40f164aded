"""Which credential a request presents, and the principal it proves: an agentkb API key or an OAuth access token.

- `X-API-Key` (and OB1's carriers, read by the gate) is an agentkb key, as ever.
- `Authorization: Bearer <agentkb key>` is the same key (MCP clients send keys that way).
- `Authorization: Bearer <JWT>` is an access token of the configured issuer (services/identity/verifier.py,
  imported here only then: the API-key path never loads PyJWT).
With no credential at all, the 401 carries `WWW-Authenticate: Bearer realm="agentkb"` when an issuer is
configured, so an OAuth client knows a token is welcome. A key in X-API-Key wins over an Authorization header.
"""

from __future__ import annotations

import hashlib

from agentkb.config import Settings
from agentkb.errors import InsufficientScope, Unauthorized
from agentkb.models.domain import Principal
from agentkb.ports.access import KeyStore, SecretStore
from agentkb.services.access.api_keys import KEY_PREFIX, authenticate, require_scope

REALM = "agentkb"


def bearer_token(authorization: str | None) -> str | None:
    """The token of `Authorization: Bearer <token>` (scheme case-insensitive), else None."""
    scheme, _, token = (authorization or "").strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def authenticate_request(keys: KeyStore, secrets: SecretStore, settings: Settings, api_key: str | None,
                         authorization: str | None) -> Principal:
    if api_key:
        return authenticate(keys, secrets, api_key)
    token = bearer_token(authorization)
    if token is None:
        headers = {"WWW-Authenticate": f'Bearer realm="{REALM}"'} if settings.oidc_issuer else {}
        raise Unauthorized(headers=headers)
    if token.startswith(KEY_PREFIX + "_"):
        return authenticate(keys, secrets, token)
    from agentkb.services.identity.verifier import verify_bearer

    return verify_bearer(token, settings)


def require_route_scope(principal: Principal, scope: str) -> None:
    """The route's scope, else 403 INSUFFICIENT_SCOPE; for a token also RFC 6750's `insufficient_scope` challenge."""
    try:
        require_scope(principal, scope)
    except InsufficientScope as exc:
        if principal.issuer is not None:
            exc.headers["WWW-Authenticate"] = f'Bearer realm="{REALM}", error="insufficient_scope", scope="{scope}"'
        raise


def rate_identity(principal: Principal, direct: bool) -> str:
    """Whose per-minute budget a request spends: an API key's id over HTTP; `direct:<principal id>` for a direct
    invocation (`direct:service` when the payload names no principal); `oidc:<hash of issuer and sub>` for an
    access token, so the person or agent keeps one budget across tokens and two issuers' subs never share one.
    None of these namespaces can collide with a key id (16 hex digits)."""
    if direct:
        return f"direct:{principal.id}"
    if principal.issuer is not None:
        digest = hashlib.sha256(f"{principal.issuer}\n{principal.id}".encode()).hexdigest()[:32]
        return f"oidc:{digest}"
    return principal.key_id or principal.id
