"""Strict JSON at the gate: malformed, NaN/Infinity, duplicate keys, absurd nesting, huge numbers."""

import pytest

from agentkb.api.gate import parse_json_strict
from agentkb.errors import BadRequest


@pytest.mark.parametrize("raw", ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a": 1, "a": 2}',
                                 "{" * 5000, '{"a": ' + "[" * 100 + "]" * 100 + "}", '{"n": ' + "9" * 5000 + "}",
                                 "{not json", ""])
def test_rejected(raw: str) -> None:
    with pytest.raises(BadRequest):
        parse_json_strict(raw)


def test_accepted() -> None:
    assert parse_json_strict('{"a": [1, 2.5, "x", null, true], "b": {"c": 1e300}}')["b"]["c"] == 1e300
