"""The issuer's signing keys: OIDC discovery, then its `jwks_uri`, cached in memory (per Lambda container).

- Fresh for `ttl_s`; a key id the cache does not know triggers one refetch, at most every `min_refetch_s`, so a
  flood of garbage tokens costs at most one fetch per interval (then their unknown `kid` is a 401).
- A failed fetch is never a silent accept: the caller gets 503 + Retry-After, and no fetch is tried again until
  the retry time has passed. Keys still fresh keep verifying while a kid-miss refetch fails.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from agentkb.config import https_or_loopback
from agentkb.errors import ServiceUnavailable

Fetch = Callable[[str], dict[str, Any]]
MAX_DOCUMENT_BYTES = 512 * 1024
FETCH_TIMEOUT_S = 3.0
KEY_TYPES = {"RS256": "RSA", "ES256": "EC"}
LOG = logging.getLogger("agentkb.identity")


class IssuerUnreachable(Exception):
    """Discovery or the JWKS could not be fetched or read."""


def fetch_json(url: str) -> dict[str, Any]:
    """GET a JSON object from the identity provider (https, or http on loopback), bounded in time and size."""
    if not https_or_loopback(url):
        raise IssuerUnreachable(f"refusing a non-https identity provider URL: {url}")
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "agentkb"})
    try:
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:  # noqa: S310 (scheme checked)
            raw = response.read(MAX_DOCUMENT_BYTES + 1)
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        raise IssuerUnreachable(f"{type(exc).__name__} fetching {url}") from exc
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise IssuerUnreachable(f"{url} answered more than {MAX_DOCUMENT_BYTES} bytes")
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise IssuerUnreachable(f"{url} did not answer JSON") from exc
    if not isinstance(document, dict):
        raise IssuerUnreachable(f"{url} did not answer a JSON object")
    return document


def jwks_uri_of(issuer: str, fetch: Fetch) -> str:
    """`jwks_uri` from `<issuer>/.well-known/openid-configuration`, whose `issuer` must be the configured one."""
    document = fetch(issuer.rstrip("/") + "/.well-known/openid-configuration")
    if str(document.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
        raise IssuerUnreachable("the discovery document names another issuer")
    uri = document.get("jwks_uri")
    if not isinstance(uri, str) or not https_or_loopback(uri):
        raise IssuerUnreachable("the discovery document has no usable jwks_uri")
    return uri


def signing_keys(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """kid -> JWK for the RSA and EC signing keys of a JWKS (encryption keys and keys without a kid left out)."""
    keys = document.get("keys")
    if not isinstance(keys, list):
        raise IssuerUnreachable("the JWKS has no keys array")
    usable: dict[str, dict[str, Any]] = {}
    for jwk in keys:
        if not isinstance(jwk, dict) or not isinstance(jwk.get("kid"), str):
            continue
        if jwk.get("kty") in KEY_TYPES.values() and jwk.get("use", "sig") == "sig":
            usable[jwk["kid"]] = jwk
    return usable


class JwksCache:
    """One issuer's keys for this process; thread-safe (the local gateway resolves requests concurrently)."""

    def __init__(self, issuer: str, fetch: Fetch = fetch_json, *, ttl_s: float = 600.0, min_refetch_s: float = 30.0,
                 retry_after_s: int = 30, clock: Callable[[], float] = time.monotonic) -> None:
        self.issuer = issuer
        self.ttl_s, self.min_refetch_s, self.retry_after_s = ttl_s, min_refetch_s, retry_after_s
        self.fetches = 0  # JWKS and discovery requests made (tests, logs)
        self._fetch, self._clock = fetch, clock
        self._lock = threading.Lock()
        self._keys: dict[str, dict[str, Any]] = {}
        self._jwks_uri: str | None = None
        self._fetched_at: float | None = None
        self._attempted_at: float | None = None
        self._failed_at: float | None = None

    def key(self, kid: str) -> dict[str, Any] | None:
        """The JWK named `kid`, or None when the issuer does not publish it; ServiceUnavailable when the keys
        cannot be known (first fetch or an expired cache failing)."""
        with self._lock:
            now = self._clock()
            if self._fetched_at is None or now - self._fetched_at >= self.ttl_s:
                self._refresh(now)
            elif kid not in self._keys and self._attempted_at is not None \
                    and now - self._attempted_at >= self.min_refetch_s:
                self._refresh(now)  # rotated keys: one refetch, rate-limited
            return self._keys.get(kid)

    def _refresh(self, now: float) -> None:
        if self._failed_at is not None and now - self._failed_at < self.retry_after_s:
            raise self._unavailable(max(1, int(self.retry_after_s - (now - self._failed_at))))
        self._attempted_at = now
        try:
            self.fetches += 1
            if self._jwks_uri is None:
                self._jwks_uri = jwks_uri_of(self.issuer, self._fetch)
                self.fetches += 1
            keys = signing_keys(self._fetch(self._jwks_uri))
        except (IssuerUnreachable, OSError, ValueError) as exc:
            self._failed_at = now
            LOG.warning("identity provider unavailable", extra={"issuer": self.issuer, "cause": str(exc)})
            raise self._unavailable(self.retry_after_s) from exc
        self._keys, self._fetched_at, self._failed_at = keys, now, None

    @staticmethod
    def _unavailable(retry_after_s: int) -> ServiceUnavailable:
        return ServiceUnavailable("The identity provider's signing keys cannot be fetched; retry later",
                                  retry_after_s=retry_after_s, details={"reason": "identity_provider_unavailable"})
