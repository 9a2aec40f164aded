"""Canonical JSON in the style of RFC 8785 (JCS): the byte form a snapshot hash is computed over.

Object keys sorted by their UTF-16 code units, no insignificant whitespace, strings escaped like ECMAScript's
JSON.stringify (only `"`, `\\` and control characters), UTF-8 output, numbers in ECMAScript's shortest form.
Strings must be valid Unicode (a lone surrogate raises ValueError) and numbers finite.
"""

from __future__ import annotations

import hashlib
import json
import math
from decimal import Decimal
from typing import Any

_MAX_SAFE_INTEGER = 2**53 - 1


def _key(name: str) -> bytes:
    return name.encode("utf-16-be", "surrogatepass")


def format_number(value: float) -> str:
    """ECMAScript Number::toString of a finite double (what RFC 8785 prescribes for every number)."""
    if not math.isfinite(value):
        raise ValueError("NaN and Infinity have no canonical JSON form")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr is the shortest round-trip form; as ECMA-262 digits: value = 0.d1..dk * 10^n
    parts = Decimal(repr(abs(value))).normalize().as_tuple()
    k_digits = "".join(map(str, parts.digits))
    k = len(k_digits)
    n = int(parts.exponent) + k
    if k <= n <= 21:
        text = k_digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = k_digits[:n] + "." + k_digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + k_digits
    else:
        e = n - 1
        text = k_digits[0] + ("." + k_digits[1:] if k > 1 else "") + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return sign + text


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > _MAX_SAFE_INTEGER:
            raise ValueError("integers beyond 2^53 - 1 have no exact canonical JSON form")
        return str(value)
    if isinstance(value, float):
        return format_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise ValueError(f"{type(value).__name__} has no canonical JSON form")


def _encode(value: Any, out: list[str]) -> None:
    if isinstance(value, dict):
        if not all(isinstance(name, str) for name in value):
            raise ValueError("object keys must be strings")
        out.append("{")
        for i, name in enumerate(sorted(value, key=_key)):
            out.append("," if i else "")
            out.append(json.dumps(name, ensure_ascii=False) + ":")
            _encode(value[name], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for i, item in enumerate(value):
            out.append("," if i else "")
            _encode(item, out)
        out.append("]")
    else:
        out.append(_scalar(value))


def canonical_bytes(value: Any) -> bytes:
    """The canonical UTF-8 bytes of a JSON value; ValueError when it has none (lone surrogates, NaN...)."""
    out: list[str] = []
    _encode(value, out)
    try:
        return "".join(out).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("strings must be valid Unicode (no lone surrogates)") from exc


def sha256_hex(value: Any) -> str:
    """Hex sha256 of a value's canonical JSON bytes."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
