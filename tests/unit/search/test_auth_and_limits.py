"""API keys (hashed at rest, constant-time compare), scopes and the per-key rate limiter."""

import sqlite3

import pytest

from agentkb.composition import Ports
from agentkb.errors import BadRequest, InsufficientScope, Unauthorized
from agentkb.services.access.api_keys import authenticate, create_api_key, require_scope


def test_key_round_trip_and_only_a_hash_is_stored(bundle: Ports) -> None:
    key, record = create_api_key(bundle.keys, bundle.secrets, ["ws1", "ws2"], ["api:read"], "bob")
    principal = authenticate(bundle.keys, bundle.secrets, key)
    assert principal.id == "bob" and principal.workspaces == ("ws1", "ws2") and principal.scopes == ("api:read",)
    conn = sqlite3.connect(bundle.settings.database_path)
    dump = "\n".join(conn.iterdump())
    assert key not in dump and key.split("_", 2)[2] not in dump and record.key_hash in dump


@pytest.mark.parametrize("presented", [None, "", "garbage", "akb_nope_secret", "x" * 300])
def test_invalid_keys_are_401(bundle: Ports, presented: str | None) -> None:
    with pytest.raises(Unauthorized):
        authenticate(bundle.keys, bundle.secrets, presented)


def test_tampered_secret_is_401(bundle: Ports) -> None:
    key, _ = create_api_key(bundle.keys, bundle.secrets, ["ws1"], ["api:read"])
    with pytest.raises(Unauthorized):
        authenticate(bundle.keys, bundle.secrets, key[:-1] + ("A" if key[-1] != "A" else "B"))


def test_key_creation_rejects_bad_input(bundle: Ports) -> None:
    with pytest.raises(BadRequest):
        create_api_key(bundle.keys, bundle.secrets, [], ["api:read"])
    with pytest.raises(BadRequest):
        create_api_key(bundle.keys, bundle.secrets, ["ws"], ["admin"])


def test_scope_check(bundle: Ports) -> None:
    key, _ = create_api_key(bundle.keys, bundle.secrets, ["ws1"], ["api:read"])
    principal = authenticate(bundle.keys, bundle.secrets, key)
    require_scope(principal, "api:read")
    with pytest.raises(InsufficientScope) as err:
        require_scope(principal, "api:write")
    assert err.value.details["code"] == "INSUFFICIENT_SCOPE" and err.value.http_status == 403


def test_rate_limiter_counts_per_key_per_minute(bundle: Ports) -> None:
    limiter = bundle.rate_limiter
    now = 1_800_000_010.0
    decisions = [limiter.hit("k1", 3, now) for _ in range(4)]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert decisions[-1].retry_after_s == 50 and decisions[-1].reset_epoch == 1_800_000_060
    assert limiter.hit("k2", 3, now).remaining == 2  # other keys are independent
    assert limiter.hit("k1", 3, now + 60).allowed  # a new window
