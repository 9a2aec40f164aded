"""Idempotent operations: the key an operation runs once under, and what running it answered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class IdempotentCall:
    """One operation's identity: `key` within `scope` runs once; `payload_hash` must match on every repeat."""

    scope: str  # what kind of operation ("snapshot", "ingest-queue"): keys of different scopes never meet
    key: str
    payload_hash: str = ""  # "" when the key already names the whole payload (e.g. a content hash)


@dataclass(frozen=True, slots=True)
class IdempotentResult:
    """The operation's JSON result, and whether it was replayed from an earlier completed run."""

    value: dict[str, Any]
    replayed: bool
