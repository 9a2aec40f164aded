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


@pytest.mark.parametrize("raw", ['{"a":' * 1_500 + "1" + "}" * 1_500, "[" * 100_000 + "]" * 100_000,
                                 '{"a": ' + "[" * 64 + "]" * 64 + "}",
                                 '{"a": [' + "[1, {}], " * 50 + "[" * 70 + "]" * 70 + "]}"])
def test_nesting_past_the_limit_says_too_deep_even_past_the_parsers_recursion(raw: str) -> None:
    with pytest.raises(BadRequest, match="nested too deeply"):
        parse_json_strict(raw)


def test_the_limit_itself_and_brackets_inside_strings_are_accepted() -> None:
    assert parse_json_strict('{"a": ' + "[" * 63 + "]" * 63 + "}")["a"]
    assert parse_json_strict('{"a": "' + "[" * 5_000 + '", "b\\"{{": "}\\\\"}')["a"] == "[" * 5_000
