"""API keys: minting, hashing (HMAC-SHA256 with a pepper), constant-time verification, scopes."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime

from agentkb.errors import BadRequest, InsufficientScope, Unauthorized
from agentkb.models.domain import ApiKeyRecord, Principal
from agentkb.ports.access import KeyStore, SecretStore

KEY_PREFIX = "akb"
SCOPES = frozenset({"api:read", "api:write", "api:admin"})


def hash_key(pepper: bytes, key: str) -> str:
    return hmac.new(pepper, key.encode("utf-8"), hashlib.sha256).hexdigest()


def create_api_key(store: KeyStore, secrets_port: SecretStore, workspaces: list[str], scopes: list[str],
                   principal: str | None = None) -> tuple[str, ApiKeyRecord]:
    """Mint a key; only its hash is stored. Returns the plain key (shown once) and the record."""
    if not workspaces or any(not w or len(w) > 128 for w in workspaces):
        raise BadRequest("At least one workspace (1..128 characters) is required")
    unknown = set(scopes) - SCOPES
    if not scopes or unknown:
        raise BadRequest(f"Scopes must be among {sorted(SCOPES)}")
    key_id = secrets.token_hex(8)
    plain = f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"
    record = ApiKeyRecord(key_id=key_id, key_hash=hash_key(secrets_port.key_pepper(), plain),
                          principal=principal or key_id, workspaces=tuple(dict.fromkeys(workspaces)),
                          scopes=tuple(sorted(set(scopes))), created_at=datetime.now(UTC).isoformat())
    store.put_key(record)
    return plain, record


def authenticate(store: KeyStore, secrets_port: SecretStore, presented: str | None) -> Principal:
    """Resolve an X-API-Key to its principal; any failure is the same 401."""
    if not presented or len(presented) > 256:
        raise Unauthorized()
    parts = presented.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX:
        raise Unauthorized()
    record = store.get_key(parts[1])
    expected = record.key_hash if record else "0" * 64
    valid = hmac.compare_digest(hash_key(secrets_port.key_pepper(), presented), expected)
    if record is None or not valid or record.revoked:
        raise Unauthorized()
    return Principal(id=record.principal, workspaces=record.workspaces, scopes=record.scopes, key_id=record.key_id)


def require_scope(principal: Principal, scope: str) -> None:
    if scope not in principal.scopes:
        raise InsufficientScope(scope)
