"""Integers read from untrusted text (path ids, cursors, headers, document attributes)."""

from __future__ import annotations


def ascii_int(text: str | None) -> int | None:
    """The non-negative integer a string of ASCII digits spells, or None for anything else.

    `str.isdigit()` alone is not enough: '³'.isdigit() is True, yet int('³') raises (a fuzzing finding)."""
    if not text or not (text.isascii() and text.isdigit()):
        return None
    return int(text)
