"""KeyStore and RateLimiter port congruence: embedded (SQLite, a pepper file) and AWS (DynamoDB and Secrets
Manager on moto) answer alike, through the ports and through the auth service that uses them."""

from __future__ import annotations

import dataclasses

import pytest
from port_engines import EnginePorts as Ports

from agentkb.errors import Conflict, Unauthorized
from agentkb.models.domain import ApiKeyRecord, Principal
from agentkb.services.access.api_keys import authenticate, create_api_key

RECORD = ApiKeyRecord("0123456789abcdef", "f" * 64, "alice", ("ws1", "ws2"), ("api:read", "api:write"),
                      "2026-01-01T00:00:00+00:00")
WINDOW = 60
NOW = 1_800_000_030.5  # 30.5 s into a one-minute window


def test_a_key_record_reads_back_field_for_field(ports: Ports) -> None:
    revoked = dataclasses.replace(RECORD, key_id="fedcba9876543210", principal="bob", workspaces=("*",),
                                  scopes=("api:read",), revoked=True)
    for record in (RECORD, revoked):
        ports.keys.put_key(record)
        assert ports.keys.get_key(record.key_id) == record
    assert ports.keys.get_key("0000000000000000") is None


def test_a_key_id_is_never_overwritten(ports: Ports) -> None:
    ports.keys.put_key(RECORD)
    with pytest.raises(Conflict):
        ports.keys.put_key(dataclasses.replace(RECORD, key_hash="0" * 64, principal="mallory"))
    assert ports.keys.get_key(RECORD.key_id) == RECORD


def test_a_minted_key_authenticates_and_nothing_else_does(ports: Ports) -> None:
    plain, record = create_api_key(ports.keys, ports.secrets, ["ws1"], ["api:read"], "alice")
    assert authenticate(ports.keys, ports.secrets, plain) == Principal("alice", ("ws1",), ("api:read",),
                                                                       record.key_id)
    assert ports.keys.get_key(record.key_id) == record and plain not in repr(record)  # only the hash is stored
    prefix, key_id, secret = plain.split("_", 2)
    for presented in (None, "", f"{prefix}_{key_id}_{secret[:-1]}x", f"{prefix}_0000000000000000_{secret}",
                      f"nope_{key_id}_{secret}", plain + "x" * 300):
        with pytest.raises(Unauthorized):
            authenticate(ports.keys, ports.secrets, presented)


def test_a_revoked_key_is_refused(ports: Ports) -> None:
    plain, record = create_api_key(ports.keys, ports.secrets, ["ws1"], ["api:read"])
    ports.keys.put_key(dataclasses.replace(record, key_id="1111111111111111", revoked=True))
    revoked_plain = plain.replace(record.key_id, "1111111111111111")
    with pytest.raises(Unauthorized):
        authenticate(ports.keys, ports.secrets, revoked_plain)


def test_the_rate_limiter_counts_one_minute_windows(ports: Ports) -> None:
    window_end = int(NOW) // WINDOW * WINDOW + WINDOW
    decisions = [ports.rate_limiter.hit("key-a", 3, NOW + i) for i in range(4)]
    assert [(d.allowed, d.remaining, d.limit, d.reset_epoch) for d in decisions] == [
        (True, 2, 3, window_end), (True, 1, 3, window_end), (True, 0, 3, window_end), (False, 0, 3, window_end)]
    assert decisions[-1].retry_after_s == window_end - int(NOW + 3)
    assert ports.rate_limiter.hit("key-a", 3, NOW + 4).allowed is False  # refusals stay refused in the window
    assert ports.rate_limiter.hit("key-b", 3, NOW).remaining == 2  # every key has its own window
    fresh = ports.rate_limiter.hit("key-a", 3, window_end)  # the next window starts from zero
    assert (fresh.allowed, fresh.remaining, fresh.reset_epoch) == (True, 2, window_end + WINDOW)


def test_keys_are_listed_oldest_first_and_revoked_at_once(ports: Ports) -> None:
    newer = dataclasses.replace(RECORD, key_id="aaaaaaaaaaaaaaaa", created_at="2026-02-01T00:00:00+00:00")
    for record in (newer, RECORD):
        ports.keys.put_key(record)
    assert ports.keys.list_keys() == [RECORD, newer]
    assert ports.keys.revoke_key(RECORD.key_id) is True
    assert ports.keys.get_key(RECORD.key_id) == dataclasses.replace(RECORD, revoked=True)
    assert ports.keys.revoke_key("0000000000000000") is False
    assert ports.keys.get_key("0000000000000000") is None  # revoking an unknown key creates nothing
