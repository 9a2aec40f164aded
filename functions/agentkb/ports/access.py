"""Access ports: API keys, the key pepper secret and the per-key rate limiter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: keeps the handlers' cold import light
    from agentkb.models.domain import ApiKeyRecord, RateDecision


class KeyStore(Protocol):
    def put_key(self, record: ApiKeyRecord) -> None: ...

    def get_key(self, key_id: str) -> ApiKeyRecord | None: ...

    def list_keys(self) -> list[ApiKeyRecord]:
        """Every key record (hashes included; callers show ids, principals, reach and status only)."""
        ...

    def revoke_key(self, key_id: str) -> bool:
        """Mark the key revoked (it answers 401 from the next request on); False when there is no such key."""
        ...

    def delete_key(self, key_id: str) -> bool:
        """Remove the key's record entirely (forget a principal: it answers 401 at once); False when there is none."""
        ...


class SecretStore(Protocol):
    def key_pepper(self) -> bytes: ...


class RateLimiter(Protocol):
    def hit(self, key_id: str, limit: int, now: float) -> RateDecision:
        """Count one request in the caller's current one-minute window."""
        ...
