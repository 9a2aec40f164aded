"""Patches undone on exit without pytest: what the benchmarks use where a test has `monkeypatch`."""

from __future__ import annotations

import os
from contextlib import ExitStack
from typing import Any, Protocol, Self
from unittest import mock


class Patcher(Protocol):
    """What the doubles need of a patcher: pytest's `monkeypatch` and `Patches` both are one."""

    def setattr(self, target: Any, name: str, value: Any) -> None: ...


class Patches:
    """`with Patches() as patch:` patch.setattr / patch.setenv, all restored when the block ends."""

    def __init__(self) -> None:
        self._stack = ExitStack()

    def setattr(self, target: Any, name: str, value: Any) -> None:
        self._stack.enter_context(mock.patch.object(target, name, value))

    def setenv(self, name: str, value: str) -> None:
        self._stack.enter_context(mock.patch.dict(os.environ, {name: value}))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
