"""Canonical JSON (RFC 8785 style) and the snapshot hash."""

from __future__ import annotations

import hashlib

import pytest

from agentkb.services.snapshot.canonical_json import canonical_bytes, format_number, sha256_hex
from agentkb.services.snapshot.service import snapshot_hash


def test_keys_sorted_by_utf16_code_units_and_no_whitespace() -> None:
    # U+1F600 is D83D DE00 in UTF-16, so it sorts before U+E000 (code-point order would put it after)
    value = {"b": 1, "a": [1, "x\n\"", None, True, False], "\U0001f600": 1, "\ue000": 2}
    assert canonical_bytes(value) == '{"a":[1,"x\\n\\"",null,true,false],"b":1,"\U0001f600":1,"\ue000":2}'.encode()


def test_non_ascii_is_raw_utf8_and_controls_are_escaped() -> None:
    assert canonical_bytes("é€\u0001") == '"é€\\u0001"'.encode()


@pytest.mark.parametrize(("number", "text"), [
    (1.0, "1"), (0.1, "0.1"), (-2.5, "-2.5"), (1e21, "1e+21"), (1e20, "100000000000000000000"),
    (1e-7, "1e-7"), (1e-6, "0.000001"), (123.456, "123.456"), (5e-324, "5e-324"), (0.0, "0"), (-0.0, "0"),
])
def test_numbers_use_the_ecmascript_form(number: float, text: str) -> None:
    assert format_number(number) == text


@pytest.mark.parametrize("bad", ["\ud800", float("nan"), float("inf"), 2**60, {1: "x"}, object()])
def test_values_without_a_canonical_form_raise(bad: object) -> None:
    with pytest.raises(ValueError):
        canonical_bytes({"v": bad})


def test_snapshot_hash_ignores_only_the_hash_field() -> None:
    snapshot = {"b": [1, 2], "a": "x", "hash": "whatever"}
    expected = hashlib.sha256(b'{"a":"x","b":[1,2]}').hexdigest()
    assert snapshot_hash(snapshot) == expected == sha256_hex({"a": "x", "b": [1, 2]})
    assert snapshot_hash({**snapshot, "hash": "other"}) == expected
